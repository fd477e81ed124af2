/**
 * Agents as tools: `defineAgentTool` offers a sub-agent to a turn as one tool. A call runs the
 * sub-agent as a child turn (`workflows/agents/agent-tool-call.ts`), a workflow of its own, so its
 * approvals and client tools park where they belong, in the child, and are listed with the
 * parent turn's id; the child's answer (its typed `output`, or its text) is the call's result.
 *
 *   const researcher = defineAgentTool({
 *     name: 'research',
 *     description: 'Researches a question with the search tools.',
 *     inputSchema: z.object({ question: z.string() }),
 *     agent: { model: { provider: 'openai', model: 'gpt-4.1-mini' }, tools: ['web_search'] },
 *     prompt: (input) => input.question,
 *   });
 */
import { z } from 'zod';
import { checkCommon, toJsonSchema, ToolDefinitionError, type AgentTool } from './tools.js';
import { anthropicSchemaProblem } from '../workflows/agents/output-schema.js';
import type { AgentToolSpec, ToolSpec } from '../workflows/types/index.js';
import { speaksAnthropic } from '../workflows/types/provider-families.js';

/** How deep agent tools nest by default: a root turn, and three levels of sub-agents below it. */
export const DEFAULT_MAX_AGENT_DEPTH = 3;

export type AgentToolOptions<InputSchema extends z.ZodType> = Omit<AgentTool<InputSchema>, 'kind' | 'outputSchema'>;

/** Defines a sub-agent offered as a tool; with `approval`, a call waits for a decision before the sub-agent starts. */
export function defineAgentTool<InputSchema extends z.ZodType>(options: AgentToolOptions<InputSchema>): AgentTool<InputSchema> {
  checkCommon(options, 'defineAgentTool');
  const what = `defineAgentTool "${options.name}"`;
  const agent = options.agent as AgentTool['agent'] | undefined;
  if (!agent || typeof agent !== 'object') throw new ToolDefinitionError(`${what}: agent { model, ... } is required`);
  if (!agent.model || typeof agent.model.provider !== 'string' || typeof agent.model.model !== 'string') {
    throw new ToolDefinitionError(`${what}: agent.model must be { provider, model }`);
  }
  if (agent.tools !== undefined && (!Array.isArray(agent.tools) || agent.tools.some((name) => typeof name !== 'string'))) {
    throw new ToolDefinitionError(`${what}: agent.tools must be a list of tool names`);
  }
  if (agent.tools?.includes(options.name)) {
    throw new ToolDefinitionError(`${what}: agent.tools lists the tool itself; a sub-agent that calls itself would never end`);
  }
  if (agent.maxSteps !== undefined && (!Number.isInteger(agent.maxSteps) || agent.maxSteps < 1)) {
    throw new ToolDefinitionError(`${what}: agent.maxSteps must be a positive integer`);
  }
  if (agent.output !== undefined && !(agent.output?.schema instanceof z.ZodType)) {
    throw new ToolDefinitionError(`${what}: agent.output.schema must be a zod schema`);
  }
  // A schema the sub-agent's provider cannot be asked for would fail its turn at every call: refused here.
  const outputProblem = agent.output !== undefined && speaksAnthropic(agent.model.provider) ? anthropicSchemaProblem(toJsonSchema(agent.output.schema)) : undefined;
  if (outputProblem) throw new ToolDefinitionError(`${what}: agent.output.${outputProblem}`);
  if (options.prompt !== undefined && typeof options.prompt !== 'function') {
    throw new ToolDefinitionError(`${what}: prompt must be a function of the input`);
  }
  if (options.approval !== undefined && options.approval !== true && typeof options.approval !== 'function') {
    throw new ToolDefinitionError(`${what}: approval must be true or a policy function`);
  }
  if ((options.approvers !== undefined || options.approverGroups !== undefined) && options.approval === undefined) {
    throw new ToolDefinitionError(`${what}: approvers or approverGroups is set but the tool has no approval policy`);
  }
  if ('execute' in options) throw new ToolDefinitionError(`${what}: an agent tool has no execute function; its sub-agent answers the call`);
  return { ...options, kind: 'agent' };
}

/** The data-only view of an agent tool the workflow receives. */
export function agentToolSpec(tool: AgentTool, maxDepth: number): ToolSpec {
  const { agent } = tool;
  const spec: AgentToolSpec = {
    model: agent.model,
    ...(agent.system !== undefined ? { system: agent.system } : {}),
    ...(agent.tools !== undefined ? { tools: [...agent.tools] } : {}),
    ...(agent.output ? { output: { ...agent.output, schema: toJsonSchema(agent.output.schema) } } : {}),
    ...(agent.maxSteps !== undefined ? { maxSteps: agent.maxSteps } : {}),
    ...(tool.prompt ? { prompt: true as const } : {}),
    maxDepth,
  };
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: toJsonSchema(tool.inputSchema),
    kind: 'agent',
    agent: spec,
    approval: tool.approval === undefined ? 'never' : tool.approval === true ? 'always' : 'policy',
    ...(tool.approvers ? { approvers: [...tool.approvers] } : {}),
    ...(tool.approverGroups ? { approverGroups: [...tool.approverGroups] } : {}),
  };
}

/** The sub-agent's user message for a call (the `agentToolPrompt` activity): the tool's prompt of the validated input. */
export function agentToolPrompt(tool: AgentTool | undefined, toolName: string, input: unknown): string {
  if (!tool?.prompt) return JSON.stringify(input);
  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) throw new Error(`Invalid input for agent tool "${toolName}":\n${z.prettifyError(parsed.error)}`);
  const prompt = tool.prompt(parsed.data);
  if (typeof prompt !== 'string' || prompt.length === 0) throw new Error(`The prompt of agent tool "${toolName}" did not return a non-empty string`);
  return prompt;
}
