/** The worker's tools by name, and the data-only view of them that the workflow receives. */
import { ApplicationFailure } from '@temporalio/common';
import { agentToolSpec, DEFAULT_MAX_AGENT_DEPTH } from './agent-tools.js';
import { toJsonSchema, ToolDefinitionError, type Tool } from './tools.js';
import type { ToolSpec } from '../workflows/types/index.js';
import { approvalPolicyOf, approvalSpecFields } from './approval-rules.js';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  /** Specs of the named tools (all when `names` is absent), in registration order. */
  specs(names?: string[]): ToolSpec[];
}

function toSpec(tool: Tool, maxAgentDepth: number): ToolSpec {
  if (tool.kind === 'agent') return agentToolSpec(tool, maxAgentDepth);
  const base = {
    name: tool.name,
    description: tool.description,
    inputSchema: toJsonSchema(tool.inputSchema),
    ...(tool.outputSchema ? { outputSchema: toJsonSchema(tool.outputSchema) } : {}),
  };
  if (tool.kind === 'client') return { ...base, kind: 'client', approval: 'never' };
  return {
    ...base,
    kind: 'server',
    approval: policyKind(approvalPolicyOf(tool.approval)),
    ...approvalSpecFields(tool.approval, tool),
    ...(tool.activityOptions ? { activityOptions: tool.activityOptions } : {}),
    ...(typeof tool.cancel === 'function' ? { cancellable: true as const } : {}),
  };
}

function policyKind(policy: unknown): ToolSpec['approval'] {
  return policy === undefined ? 'never' : policy === true ? 'always' : 'policy';
}

export function createToolRegistry(tools: readonly Tool[], maxAgentDepth = DEFAULT_MAX_AGENT_DEPTH): ToolRegistry {
  if (!Number.isInteger(maxAgentDepth) || maxAgentDepth < 1) throw new ToolDefinitionError(`maxAgentDepth must be a positive integer (got ${maxAgentDepth})`);
  const byName = new Map<string, Tool>();
  const specs = new Map<string, ToolSpec>();
  for (const tool of tools) {
    if (tool?.kind !== 'server' && tool?.kind !== 'client' && tool?.kind !== 'agent') {
      throw new ToolDefinitionError('every tool must come from defineTool, defineClientTool or defineAgentTool');
    }
    if (byName.has(tool.name)) throw new ToolDefinitionError(`two tools are named "${tool.name}"`);
    byName.set(tool.name, tool);
    // Computed once per worker: JSON Schema conversion is not free and never changes.
    specs.set(tool.name, toSpec(tool, maxAgentDepth));
  }
  checkAgentTools(byName);
  return {
    get: (name) => byName.get(name),
    specs(names) {
      if (names === undefined) return [...specs.values()];
      const unknown = names.filter((name) => !specs.has(name));
      if (unknown.length > 0) {
        throw ApplicationFailure.nonRetryable(
          `Unknown tool(s) requested for this turn: ${unknown.join(', ')}. Registered: ${[...specs.keys()].join(', ') || '(none)'}`,
          'UnknownToolRequested',
        );
      }
      return names.map((name) => specs.get(name)!);
    },
  };
}

/**
 * A sub-agent may be offered only tools this worker has: its own, or an MCP server's
 * (`<server>__<tool>`, checked when the child's first step lists them). Refused now rather than
 * failing the child turn's first step.
 */
function checkAgentTools(byName: ReadonlyMap<string, Tool>): void {
  for (const tool of byName.values()) {
    if (tool.kind !== 'agent') continue;
    const unknown = (tool.agent.tools ?? []).filter((name) => !byName.has(name) && !name.includes('__'));
    if (unknown.length > 0) {
      throw new ToolDefinitionError(`agent tool "${tool.name}" offers its sub-agent tools this worker does not have: ${unknown.join(', ')}`);
    }
  }
}
