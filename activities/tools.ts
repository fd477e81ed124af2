/**
 * Defining tools. Three kinds, each declared explicitly (the contract forbids inferring
 * "client" from a missing function):
 *
 * - server: `defineTool({ ..., execute })` runs as an activity at once;
 * - approval-gated: a server tool with `approval: true` or a policy function of the
 *   validated input; it runs only after an approval (automatic or a person's);
 * - client: `defineClientTool({ ... })` parks until the caller submits its result.
 */
import { z } from 'zod';
import { approvalRuleProblem, isApprovalRule, type ApprovalPolicy, type ApprovalRule } from './approval-rules.js';
export type { ApprovalPolicy, ApprovalVerdict } from './approval-rules.js';
import type { JsonSchema, ActivityCallOptions, ModelSettings } from '../workflows/types/index.js';

/** What a tool's `execute` receives besides its input. */
export interface ToolExecutionContext {
  toolCallId: string;
  /** `<workflowId>/<toolCallId>`: stable across activity retries and workflow replays. */
  idempotencyKey: string;
  /** Aborted when the turn is cancelled or the activity times out. */
  abortSignal: AbortSignal;
  /** Records progress; a long-running tool should call it so cancellation reaches it. */
  heartbeat(details?: unknown): void;
}


interface ToolBase<InputSchema extends z.ZodType, OutputSchema extends z.ZodType> {
  name: string;
  description: string;
  inputSchema: InputSchema;
  outputSchema?: OutputSchema;
}

export interface ServerToolOptions<InputSchema extends z.ZodType, OutputSchema extends z.ZodType>
  extends ToolBase<InputSchema, OutputSchema> {
  execute(input: z.output<InputSchema>, context: ToolExecutionContext): Promise<z.input<OutputSchema>> | z.input<OutputSchema>;
  /**
   * `true`: every call waits for a person; a function decides per call from the validated input;
   * an object adds a quorum, the requester's exclusion and escalation (`ApprovalRule`, with `when`
   * for the policy).
   */
  approval?: ApprovalPolicy<z.output<InputSchema>> | ApprovalRule<z.output<InputSchema>>;
  /** Only these approvers may decide this tool's calls (with `approverGroups`: these, or members of those groups). */
  approvers?: string[];
  /**
   * Members of these groups may decide this tool's calls. Groups come with the decision: the HTTP
   * API takes them from the caller's identity-provider token, never from the request body.
   */
  approverGroups?: string[];
  /** Timeout and retry of this tool's activity. Default: 60s, 3 attempts. */
  activityOptions?: ActivityCallOptions;
}

export type ClientToolOptions<InputSchema extends z.ZodType, OutputSchema extends z.ZodType> = ToolBase<InputSchema, OutputSchema>;

export interface ServerTool<InputSchema extends z.ZodType = z.ZodType, OutputSchema extends z.ZodType = z.ZodType>
  extends ServerToolOptions<InputSchema, OutputSchema> {
  kind: 'server';
  /**
   * Undoes what a call started outside the worker when its turn is cancelled while the call runs
   * (`defineA2aAgentTool` sets it: the remote task is asked to cancel). Run once, best effort, by
   * the `cancelToolCall` activity; what it returns is recorded as that activity's result.
   */
  cancel?(input: z.output<InputSchema>, context: ToolCancelContext): Promise<string>;
}

/** What a tool's `cancel` receives besides the call's input. */
export interface ToolCancelContext {
  /** The call's id, as its `execute` had it. */
  toolCallId: string;
  /** The call's `idempotencyKey`, as its `execute` had it. */
  idempotencyKey: string;
  /** When the call started to run (milliseconds since the epoch, the turn's clock). */
  startedAtMs: number;
}

export interface ClientTool<InputSchema extends z.ZodType = z.ZodType, OutputSchema extends z.ZodType = z.ZodType>
  extends ClientToolOptions<InputSchema, OutputSchema> {
  kind: 'client';
}

/**
 * A sub-agent offered as a tool (`defineAgentTool`, agent-tools.ts): its call runs as a child
 * turn with these settings, and the child's answer is the call's result.
 */
export interface AgentTool<InputSchema extends z.ZodType = z.ZodType> extends ToolBase<InputSchema, z.ZodType> {
  kind: 'agent';
  agent: {
    model: ModelSettings;
    system?: string;
    /** Registered tool names the sub-agent is offered (none when absent). */
    tools?: string[];
    /** A typed final answer, which becomes the call's result. */
    output?: { schema: z.ZodType; name?: string; maxRetries?: number };
    maxSteps?: number;
  };
  /** The sub-agent's user message from the validated input (default: the input as JSON). */
  prompt?: (input: z.output<InputSchema>) => string;
  /** As for a server tool: the call waits for a decision before the sub-agent starts. */
  approval?: ApprovalPolicy<z.output<InputSchema>>;
  approvers?: string[];
  approverGroups?: string[];
}

export type Tool = ServerTool | ClientTool | AgentTool;

/**
 * What a client tool's result is: the value its output schema describes (as the turn checks it,
 * the schema's output side), or `unknown` for a tool without one.
 */
export type ClientToolOutput<Tool extends ClientTool> = Tool extends ClientTool<z.ZodType, infer OutputSchema> ? z.output<OutputSchema> : never;

/**
 * A client tool's result as `TurnpikeClient.submitToolResult` takes it, typed from the tool's
 * output schema: `output` is what the schema describes, unless `isError` says the tool failed
 * (then it is any detail of the failure, which the turn does not check against the schema).
 */
export type ClientToolResult<Tool extends ClientTool = ClientTool> =
  | { toolCallId: string; output: ClientToolOutput<Tool>; isError?: false }
  | { toolCallId: string; output: unknown; isError: true };

/** Thrown when a tool is defined inconsistently, at definition time, never mid-turn. */
export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function checkCommon(options: { name?: unknown; description?: unknown; inputSchema?: unknown; outputSchema?: unknown }, what: string): void {
  if (typeof options.name !== 'string' || !TOOL_NAME.test(options.name)) {
    // Both OpenAI and Anthropic restrict tool names to this alphabet and length.
    throw new ToolDefinitionError(`${what}: name must match ${TOOL_NAME} (got ${JSON.stringify(options.name)})`);
  }
  if (typeof options.description !== 'string' || options.description.length === 0) {
    throw new ToolDefinitionError(`${what} "${options.name}": description is required; the model chooses tools by it`);
  }
  if (!(options.inputSchema instanceof z.ZodType)) {
    throw new ToolDefinitionError(`${what} "${options.name}": inputSchema must be a zod schema`);
  }
  if (options.outputSchema !== undefined && !(options.outputSchema instanceof z.ZodType)) {
    throw new ToolDefinitionError(`${what} "${options.name}": outputSchema must be a zod schema`);
  }
  // Fail now, not on the first turn, if the schema cannot be shown to a model.
  try {
    const schema = z.toJSONSchema(options.inputSchema);
    if (schema.type !== 'object') throw new Error(`the input schema must describe an object, not ${String(schema.type)}`);
  } catch (error) {
    throw new ToolDefinitionError(`${what} "${options.name}": ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Defines a server tool; with `approval` it is approval-gated. */
export function defineTool<InputSchema extends z.ZodType, OutputSchema extends z.ZodType = z.ZodType>(
  options: ServerToolOptions<InputSchema, OutputSchema>,
): ServerTool<InputSchema, OutputSchema> {
  checkCommon(options, 'defineTool');
  if (typeof options.execute !== 'function') {
    throw new ToolDefinitionError(
      `defineTool "${options.name}": a server tool needs an execute function; a tool the caller runs must be declared with defineClientTool`,
    );
  }
  if (options.approval !== undefined && options.approval !== true && typeof options.approval !== 'function' && !isApprovalRule(options.approval)) {
    throw new ToolDefinitionError(`defineTool "${options.name}": approval must be true, a policy function or an approval object`);
  }
  if (isApprovalRule<never>(options.approval)) {
    const problem = approvalRuleProblem(options.approval, options);
    if (problem) throw new ToolDefinitionError(`defineTool "${options.name}": ${problem}`);
  }
  if (options.approvers !== undefined && (!Array.isArray(options.approvers) || options.approvers.some((a) => typeof a !== 'string'))) {
    throw new ToolDefinitionError(`defineTool "${options.name}": approvers must be a list of strings`);
  }
  if (options.approvers !== undefined && options.approval === undefined) {
    throw new ToolDefinitionError(`defineTool "${options.name}": approvers is set but the tool has no approval policy`);
  }
  if (options.approverGroups !== undefined && (!Array.isArray(options.approverGroups) || options.approverGroups.some((group) => typeof group !== 'string'))) {
    throw new ToolDefinitionError(`defineTool "${options.name}": approverGroups must be a list of strings`);
  }
  if (options.approverGroups !== undefined && options.approval === undefined) {
    throw new ToolDefinitionError(`defineTool "${options.name}": approverGroups is set but the tool has no approval policy`);
  }
  return { ...options, kind: 'server' };
}

/** Defines a tool that only the caller can execute (a browser action, a question to the user). */
export function defineClientTool<InputSchema extends z.ZodType, OutputSchema extends z.ZodType = z.ZodType>(
  options: ClientToolOptions<InputSchema, OutputSchema>,
): ClientTool<InputSchema, OutputSchema> {
  checkCommon(options, 'defineClientTool');
  const extra = options as unknown as Record<string, unknown>;
  for (const serverOnly of ['execute', 'approval', 'approvers', 'approverGroups', 'activityOptions']) {
    if (extra[serverOnly] !== undefined) {
      throw new ToolDefinitionError(
        `defineClientTool "${options.name}": a client tool cannot have ${serverOnly}; the caller runs it. Use defineTool for a tool the worker runs`,
      );
    }
  }
  return { ...options, kind: 'client' };
}

/** JSON Schema of a zod schema, as the model and the workflow's validators see it. */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as JsonSchema;
  return rest;
}
