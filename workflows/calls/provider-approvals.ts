/**
 * A provider's own approval request (OpenAI's `mcp_approval_request`: a remote MCP server the
 * turn offered with `require_approval` wants to run one of its tools). The provider step turns it
 * into a tool call of the reserved name {@link PROVIDER_APPROVAL_TOOL}, with the request item kept
 * verbatim in its `providerMetadata`, so that it parks like any other call that needs a person:
 * listed, decided, audited, denied on expiry. Its one result is the decision, which the provider
 * sends back as the request's answer (`mcp_approval_response`); no activity ever runs for it.
 * Pure helpers: no commands.
 */
import type { Message, ToolCallPart, ToolSpec } from '../types/index.js';

/**
 * The tool name of a provider's approval request. A worker tool of the same name is not mistaken
 * for one: an approval request also carries its request item (`isProviderApproval`).
 */
export const PROVIDER_APPROVAL_TOOL = 'openai_mcp_approval';

/** The `providerMetadata` key under which the request item travels, verbatim. */
export const PROVIDER_APPROVAL_METADATA = 'turnpike';

/** Whether the call is a provider's approval request rather than a call of one of the turn's tools. */
export function isProviderApproval(call: ToolCallPart): boolean {
  return call.toolName === PROVIDER_APPROVAL_TOOL && call.providerMetadata?.[PROVIDER_APPROVAL_METADATA]?.mcpApprovalRequest !== undefined;
}

/**
 * The spec such a call parks under: anyone who may decide the turn's approvals may decide it, and
 * no edited input passes its schema (the provider's answer is approve or deny; it takes no edit).
 */
export const PROVIDER_APPROVAL_SPEC: ToolSpec = {
  name: PROVIDER_APPROVAL_TOOL,
  description: "A remote MCP server's tool call that the provider asks a person to approve.",
  inputSchema: { not: {} },
  kind: 'server',
  approval: 'always',
};

/** What the model is told of an approved request: the provider runs the MCP tool and reports its result itself. */
export const PROVIDER_APPROVAL_APPROVED = 'Approved. The provider runs the MCP tool call.';

/** The providers that understand their approval requests: every other is sent none. */
export const PROVIDER_APPROVAL_PROVIDERS: readonly string[] = ['openai-responses', 'azure-openai-responses'];

/**
 * The messages without provider approval requests and their results, for a provider that did not
 * make them (a conversation that moves from `openai-responses` to another provider): to that
 * provider they would be calls of a tool it was never offered. A message left empty goes too.
 */
export function withoutProviderApprovals(messages: readonly Message[]): Message[] {
  const dropped = new Set<string>();
  const kept: Message[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      kept.push(message);
      continue;
    }
    if (message.role === 'assistant') {
      const content = message.content.filter((part) => !(part.type === 'tool-call' && isProviderApproval(part) && dropped.add(part.toolCallId)));
      if (content.length === message.content.length) kept.push(message);
      else if (content.length > 0) kept.push({ ...message, content });
      continue;
    }
    const content = message.content.filter((part) => !dropped.has(part.toolCallId));
    if (content.length === message.content.length) kept.push(message);
    else if (content.length > 0) kept.push({ ...message, content });
  }
  return kept;
}
