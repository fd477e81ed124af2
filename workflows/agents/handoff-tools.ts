/**
 * Handoff tools: what the model is offered so that it can hand the conversation to another
 * agent. One tool per agent a turn may hand to, named `transfer_to_<agent>` (the name the OpenAI
 * Agents SDK gives its handoff tools), described by the agent's own description. The turn
 * settles their calls itself (`handoffs.ts`); no activity ever runs one.
 * Pure functions: the model step's activity and the workflows both use them.
 */
import type { HandoffTarget, ToolSpec } from '../types/index.js';

export const HANDOFF_TOOL_PREFIX = 'transfer_to_';
/** The patch of the paths a handoff takes, in the turn and in the conversation (docs/versioning.md). */
export const HANDOFFS_PATCH = '0.2.0-handoffs';
/**
 * Agent names: letters, digits, `_` and `-`, at most 52 characters, so that `transfer_to_<name>`
 * stays within the 64 characters both providers allow a tool name.
 */
export const AGENT_NAME = /^[a-zA-Z0-9_-]{1,52}$/;

export function handoffToolName(agent: string): string {
  return `${HANDOFF_TOOL_PREFIX}${agent}`;
}

/** The handoff tools of a turn, in the order of its targets. */
export function handoffToolSpecs(targets: readonly HandoffTarget[]): ToolSpec[] {
  return targets.map(({ agent, description }) => ({
    name: handoffToolName(agent),
    kind: 'handoff',
    description: `Hand the conversation to the ${agent} agent, which answers the user from here on. ${description}`.trim(),
    inputSchema: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why the conversation goes to this agent.' } },
      additionalProperties: false,
    },
    approval: 'never',
  }));
}

/** A turn's tools and its handoff tools: a handoff tool takes the place of a registered tool of the same name. */
export function withHandoffTools(specs: readonly ToolSpec[], targets: readonly HandoffTarget[] | undefined): ToolSpec[] {
  if (!targets || targets.length === 0) return [...specs];
  const handoffs = handoffToolSpecs(targets);
  const names = new Set(handoffs.map((spec) => spec.name));
  return [...specs.filter((spec) => !names.has(spec.name)), ...handoffs];
}

/** Why a turn's `handoffs` cannot be offered, or undefined. */
export function handoffTargetsProblem(targets: unknown): string | undefined {
  if (targets === undefined) return undefined;
  if (!Array.isArray(targets)) return 'handoffs must be a list of { agent, description }';
  const seen = new Set<string>();
  for (const [index, target] of targets.entries()) {
    const { agent, description } = (target ?? {}) as Partial<HandoffTarget>;
    if (typeof agent !== 'string' || !AGENT_NAME.test(agent)) return `handoffs[${index}].agent must match ${AGENT_NAME.source}`;
    if (typeof description !== 'string') return `handoffs[${index}].description must be a string`;
    if (seen.has(agent)) return `handoffs[${index}].agent "${agent}" is listed twice`;
    seen.add(agent);
  }
  return undefined;
}
