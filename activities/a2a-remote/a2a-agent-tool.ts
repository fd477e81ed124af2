/**
 * Remote A2A agents as tools: `defineA2aAgentTool` offers an agent served over A2A 1.0 (JSON-RPC)
 * to a turn as one server tool. A call sends the message, then follows the remote task without
 * holding a worker: each `executeTool` attempt does one short request (send, or `GetTask`) and,
 * while the remote task is still working, ends with a retryable failure whose `nextRetryDelay` is
 * the poll interval. Temporal schedules the next attempt on its own (no worker waits, and failed
 * attempts add nothing to the turn's history), any worker takes it, and the remote task's id
 * travels from attempt to attempt in the activity's heartbeat details (`a2a-remote-call.ts`).
 *
 *   const researcher = defineA2aAgentTool({
 *     name: 'research_desk',
 *     url: 'https://agents.example.com/research/',       // where /.well-known/agent-card.json is
 *     description: 'Researches a question and answers with sources.',
 *     approval: true,                                    // optional: a person approves each call first
 *   });
 *
 * The model calls it with `{ message }`. A remote task that asks for input (`input-required`) is
 * answered by whoever `inputRequired` names:
 * - `'model'` (the default): the call's result is the question and the remote task's id, and the
 *   model answers it by calling the tool again with `{ message, taskId }`;
 * - `'person'`: the question (the remote's status message) parks in the turn as a question for a
 *   person, as an MCP server's question does (`kind: 'elicitation'` in `turnState.pending` and
 *   `listParkedCalls`), and the call waits, no worker held (a2a-person-question.ts). The person
 *   answers with `submitToolResult(turnId, { toolCallId, output: { action: 'accept', content: {
 *   answer } } })` (or the HTTP API, the dashboard, an A2A follow-up): `answer` is sent to the
 *   remote task as its next message, and the call follows the task to its end. `decline` or
 *   `cancel` (and a question nobody answers before the turn's `clientToolTimeout`, which answers
 *   `cancel`) asks the remote to cancel its task and fails the call (`A2aInputDeclined`), so the
 *   model reads that the person declined. `timeout` bounds the whole call, the person's time
 *   included. The model's input is then `{ message }` alone.
 */
import { msToNumber } from '@temporalio/common';
import { z } from 'zod';
import { approvalRuleProblem, isApprovalRule, type ApprovalPolicy, type ApprovalRule } from '../approval-rules.js';
import { checkCommon, ToolDefinitionError, type ServerTool } from '../tools.js';
import type { A2aAgentCard, A2aRemoteSettings } from './a2a-remote-settings.js';

/** The input a remote agent's tool takes unless `inputSchema` says otherwise. */
export const A2A_TOOL_INPUT = z.object({
  message: z.string().min(1).describe('What to ask the remote agent, in plain words.'),
  taskId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Only to answer a remote task that asked for more input: the taskId its earlier result named.'),
});

/** The input of a tool whose remote questions a person answers (`inputRequired: 'person'`): no `taskId`. */
export const A2A_PERSON_TOOL_INPUT = A2A_TOOL_INPUT.pick({ message: true });

/** `defineA2aAgentTool`'s options: where the remote agent is, what the model is told, approval, and how the call follows the remote task. */
export interface A2aAgentToolOptions<InputSchema extends z.ZodType = typeof A2A_TOOL_INPUT> {
  /** The tool's name, as the model sees it (`^[a-zA-Z0-9_-]{1,64}$`). */
  name: string;
  /** What the model is told the agent does. Default: the card's description (required with `url` alone). */
  description?: string;
  /** The agent's base URL: its card is read from `<url>/.well-known/agent-card.json` at the first call. */
  url?: string;
  /** The agent's card itself, instead of `url`. */
  card?: A2aAgentCard;
  /** The fetch the A2A client uses (e.g. to add an `Authorization` header from the worker's environment). */
  fetch?: typeof fetch;
  /** Default: `{ message, taskId? }`. Another object schema needs `prompt`; its `taskId` field, when a string, continues a remote task. */
  inputSchema?: InputSchema;
  /** The message text from the validated input (default: its `message`). */
  prompt?: (input: z.output<InputSchema>) => string;
  /** As for `defineTool`: the call waits for a decision before anything is sent. */
  approval?: ApprovalPolicy<z.output<InputSchema>> | ApprovalRule<z.output<InputSchema>>;
  /** Only these approvers (or members of `approverGroups`) may decide the tool's calls. */
  approvers?: string[];
  /** Members of these groups may decide the tool's calls. */
  approverGroups?: string[];
  /**
   * Who answers the remote task when it asks for input (`input-required`): `'model'` (the default),
   * the calling model, from the call's result; or `'person'`, a question parked in the turn and
   * answered like an MCP server's question, its answer sent to the remote task.
   */
  inputRequired?: 'model' | 'person';
  /** How often the remote task is read while it works (default `2s`; at least `100ms`). */
  pollInterval?: string;
  /** How long a call follows the remote task, a person's answer included, before it fails and asks the remote to cancel (default `10m`). */
  timeout?: string;
}

const MIN_POLL_MS = 100;
/** Each attempt is one or two short requests; this bounds a remote that does not answer. */
const ATTEMPT_TIMEOUT = '30s';

/** Defines a remote A2A agent offered as a tool. */
export function defineA2aAgentTool<InputSchema extends z.ZodType = typeof A2A_TOOL_INPUT>(
  options: A2aAgentToolOptions<InputSchema>,
): ServerTool<InputSchema, z.ZodString> {
  const what = `defineA2aAgentTool "${String(options?.name)}"`;
  if (options.url === undefined && options.card === undefined) throw new ToolDefinitionError(`${what}: url or card is required`);
  if (options.url !== undefined && options.card !== undefined) throw new ToolDefinitionError(`${what}: give url or card, not both`);
  if (options.url !== undefined && !isHttpUrl(options.url)) throw new ToolDefinitionError(`${what}: url must be an http(s) URL (got ${JSON.stringify(options.url)})`);
  if (options.card !== undefined && (typeof options.card !== 'object' || options.card === null || typeof options.card.name !== 'string')) {
    throw new ToolDefinitionError(`${what}: card must be an Agent Card object with a name`);
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new ToolDefinitionError(`${what}: fetch must be a function`);
  const description = options.description ?? options.card?.description;
  const inputRequired = options.inputRequired ?? 'model';
  if (inputRequired !== 'model' && inputRequired !== 'person') {
    throw new ToolDefinitionError(`${what}: inputRequired must be 'model' or 'person' (got ${JSON.stringify(options.inputRequired)})`);
  }
  const inputSchema = (options.inputSchema ?? (inputRequired === 'person' ? A2A_PERSON_TOOL_INPUT : A2A_TOOL_INPUT)) as InputSchema;
  checkCommon({ name: options.name, description, inputSchema }, 'defineA2aAgentTool');
  if (options.inputSchema !== undefined && typeof options.prompt !== 'function') {
    throw new ToolDefinitionError(`${what}: a tool with its own inputSchema needs prompt, the message text from the input`);
  }
  if (options.prompt !== undefined && typeof options.prompt !== 'function') throw new ToolDefinitionError(`${what}: prompt must be a function of the input`);
  if (options.approval !== undefined && options.approval !== true && typeof options.approval !== 'function' && !isApprovalRule(options.approval)) {
    throw new ToolDefinitionError(`${what}: approval must be true, a policy function or an approval object`);
  }
  if (isApprovalRule<never>(options.approval)) {
    const problem = approvalRuleProblem(options.approval, options);
    if (problem) throw new ToolDefinitionError(`${what}: ${problem}`);
  }
  if ((options.approvers !== undefined || options.approverGroups !== undefined) && options.approval === undefined) {
    throw new ToolDefinitionError(`${what}: approvers or approverGroups is set but the tool has no approval policy`);
  }
  const pollIntervalMs = durationMs(options.pollInterval ?? '2s', `${what}: pollInterval`);
  const timeoutMs = durationMs(options.timeout ?? '10m', `${what}: timeout`);
  if (pollIntervalMs < MIN_POLL_MS) throw new ToolDefinitionError(`${what}: pollInterval must be at least ${MIN_POLL_MS}ms`);
  if (timeoutMs < pollIntervalMs) throw new ToolDefinitionError(`${what}: timeout must be at least pollInterval`);

  const settings: A2aRemoteSettings = {
    toolName: options.name,
    ...(options.url !== undefined ? { url: options.url } : {}),
    ...(options.card !== undefined ? { card: options.card } : {}),
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    prompt: (input) => (options.prompt ? options.prompt(input as z.output<InputSchema>) : (input as { message: string }).message),
    inputRequired,
    pollIntervalMs,
    timeoutMs,
  };
  // Every poll is an attempt: enough attempts for the whole timeout, plus a few for transient failures.
  const attempts = Math.ceil(timeoutMs / pollIntervalMs) + 10;
  return {
    name: options.name,
    description: description!,
    inputSchema,
    ...(options.approval !== undefined ? { approval: options.approval } : {}),
    ...(options.approvers !== undefined ? { approvers: options.approvers } : {}),
    ...(options.approverGroups !== undefined ? { approverGroups: options.approverGroups } : {}),
    activityOptions: {
      startToCloseTimeout: ATTEMPT_TIMEOUT,
      retry: { maximumAttempts: attempts, initialInterval: `${pollIntervalMs}ms`, backoffCoefficient: 1, maximumInterval: `${pollIntervalMs}ms` },
    },
    kind: 'server',
    async execute(input, context) {
      // Loaded on the first call: the A2A SDK is an optional peer.
      const { callRemoteAgent } = await import('./a2a-remote-call.js');
      return callRemoteAgent(settings, input, context);
    },
    // The turn cancelled while the call follows the remote task: the remote task is asked to cancel.
    async cancel(input, context) {
      const { cancelRemoteCall } = await import('./a2a-remote-cancel.js');
      return cancelRemoteCall(settings, input, context);
    },
  };
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function durationMs(value: string, what: string): number {
  try {
    const ms = msToNumber(value as Parameters<typeof msToNumber>[0]);
    if (Number.isFinite(ms) && ms > 0) return ms;
  } catch {
    // Reported below.
  }
  throw new ToolDefinitionError(`${what} must be a duration such as '2s' (got ${JSON.stringify(value)})`);
}
