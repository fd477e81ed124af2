/**
 * A conversation's agents: named definitions (model, system prompt, tools, and the agents each
 * may hand to). The active agent answers every user message; when its turn ends with a
 * `handoff` (`handoffs.ts`), the named agent becomes the active one and the conversation runs
 * a turn of it at once, on the same history, so the request is answered by the agent it was
 * handed to. It stays active until it hands the conversation on or back.
 *
 * Against ping-pong between agents, at most `MAX_HANDOFFS_IN_A_ROW` handoffs follow one another
 * without a user message; after that, a handoff call gets an error result instead.
 */
import * as wf from '@temporalio/workflow';
import { AGENT_NAME, HANDOFFS_PATCH } from '../agents/handoff-tools.js';
import { modelSettingsProblem } from '../turn/model-settings.js';
import type { AgentConversationInput, AgentDefinition, AgentTurnResult, ConversationCarryOver, HandoffTarget, ModelSettings, TurnOptions } from '../types/index.js';

export const MAX_HANDOFFS_IN_A_ROW = 5;

type AgentsInput = Pick<AgentConversationInput, 'model' | 'agents' | 'agent'>;

/** Why the conversation's `model`, `agents` and `agent` cannot run a turn, or undefined. */
export function agentsProblem(input: AgentsInput): string | undefined {
  const { agents, agent } = input;
  if (agents === undefined) {
    if (agent !== undefined) return 'agent names one of agents, which is not given';
    return input.model ? undefined : 'model is required (or agents)';
  }
  if (!agents || typeof agents !== 'object' || Array.isArray(agents)) return 'agents must be an object of agent definitions by name';
  const names = Object.keys(agents);
  if (names.length === 0) return 'agents must name at least one agent';
  for (const name of names) {
    const problem = definitionProblem(agents, name);
    if (problem) return `agents.${name}: ${problem}`;
  }
  if (agent !== undefined && !Object.hasOwn(agents, agent)) return `agent "${agent}" is not one of agents (${names.join(', ')})`;
  return undefined;
}

function definitionProblem(agents: Record<string, AgentDefinition>, name: string): string | undefined {
  if (!AGENT_NAME.test(name)) return `the name must match ${AGENT_NAME.source}`;
  const definition = agents[name] as Partial<AgentDefinition> | null;
  if (!definition || typeof definition !== 'object') return 'must be { model, system?, tools?, handoffs?, description? }';
  const { model, system, tools, handoffs, description } = definition;
  if (!model || typeof model.provider !== 'string' || typeof model.model !== 'string') return 'model must be { provider, model }';
  const modelProblem = modelSettingsProblem(model);
  if (modelProblem) return modelProblem;
  if (system !== undefined && typeof system !== 'string') return 'system must be a string';
  if (description !== undefined && typeof description !== 'string') return 'description must be a string';
  if (tools !== undefined && (!Array.isArray(tools) || tools.some((tool) => typeof tool !== 'string'))) return 'tools must be a list of tool names';
  if (handoffs === undefined) return undefined;
  if (!Array.isArray(handoffs)) return 'handoffs must be a list of agent names';
  for (const target of handoffs) {
    if (typeof target !== 'string' || !Object.hasOwn(agents, target)) return `handoffs names "${String(target)}", which is not one of agents`;
    if (target === name) return 'handoffs names the agent itself';
  }
  if (new Set(handoffs).size !== handoffs.length) return 'handoffs names an agent twice';
  return undefined;
}

/** The agent that answers first: `agent`, or the first of `agents`; undefined without agents. */
export function startingAgent(input: AgentsInput): string | undefined {
  return input.agents ? (input.agent ?? Object.keys(input.agents)[0]) : undefined;
}

/** The model the conversation's next turn uses, before a message's own options. */
export function activeModel(input: AgentsInput, state: ConversationCarryOver): ModelSettings {
  const definition = state.agent !== undefined ? input.agents?.[state.agent] : undefined;
  return (definition?.model ?? input.model) as ModelSettings;
}

/**
 * The active agent's settings for its next turn: its model, system prompt and tools in place of
 * the conversation's, and a handoff tool per agent it may hand to (refused once too many
 * handoffs followed one another). The conversation's settings alone without agents.
 */
export function agentTurnSettings(input: AgentConversationInput, state: ConversationCarryOver): TurnOptions & { handoffs?: HandoffTarget[]; handoffsRefused?: string } {
  const { agents, agent: _agent, carried: _carried, conversationId: _id, policy: _policy, ...settings } = input;
  const definition = state.agent !== undefined ? agents?.[state.agent] : undefined;
  if (!agents || !definition) return settings;
  const { system: _system, tools: _tools, ...rest } = settings;
  const handoffs = (definition.handoffs ?? []).map((name) => ({ agent: name, description: agents[name]?.description ?? '' }));
  const refused = (state.handoffsInARow ?? 0) >= MAX_HANDOFFS_IN_A_ROW;
  return {
    ...rest,
    model: definition.model,
    ...(definition.system !== undefined ? { system: definition.system } : {}),
    ...(definition.tools !== undefined ? { tools: definition.tools } : {}),
    ...(handoffs.length > 0 ? { handoffs } : {}),
    ...(handoffs.length > 0 && refused
      ? { handoffsRefused: `The conversation was handed between agents ${MAX_HANDOFFS_IN_A_ROW} times in a row without a user message; no further handoff is followed now. Answer the user yourself.` }
      : {}),
  };
}

/**
 * Follows a finished turn's handoff: the named agent becomes the active one. Undefined when the
 * turn handed off nowhere, or to an agent the active one may not hand to (the turn offers only
 * those, so that is a result from elsewhere, and it is ignored).
 */
export function followHandoff(input: AgentsInput, state: ConversationCarryOver, result: AgentTurnResult | undefined): { from: string; to: string } | undefined {
  const to = result?.handoff?.to;
  if (to === undefined || !input.agents || state.agent === undefined) return undefined;
  if (!wf.patched(HANDOFFS_PATCH)) return undefined;
  const from = state.agent;
  if (!(input.agents[from]?.handoffs ?? []).includes(to)) {
    wf.log.warn('Ignored a handoff to an agent the active one may not hand to', { from, to });
    return undefined;
  }
  state.agent = to;
  state.handoffsInARow = (state.handoffsInARow ?? 0) + 1;
  return { from, to };
}

/** The workflow id of the turn that goes on with the agent of a message's `count`-th handoff. */
export function handoffTurnId(conversationId: string, turnNumber: number, count: number): string {
  return `${conversationId}/turn-${turnNumber}/handoff-${count}`;
}
