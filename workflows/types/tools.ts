/**
 * Tools as the workflow knows them: data only, no functions; and what the worker decided about a call.
 * Pure types: nothing here runs.
 */
import type { JsonSchema } from './messages.js';
import type { ModelSettings } from './model.js';
import type { ApprovalRuleSpec } from './approval-rules.js';

/** What the model is told about a tool. */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Timeout and retry of an activity (Temporal duration strings, e.g. '30s'). */
export interface ActivityCallOptions {
  startToCloseTimeout?: string;
  /** A tool that runs long must heartbeat within this interval to be cancellable. */
  heartbeatTimeout?: string;
  retry?: {
    maximumAttempts?: number;
    initialInterval?: string;
    backoffCoefficient?: number;
    maximumInterval?: string;
    nonRetryableErrorTypes?: string[];
  };
}

/** What the workflow knows of a registered tool: data only, no functions. */
export interface ToolSpec extends ModelToolSpec {
  /** `handoff`: a `transfer_to_<agent>` tool, settled by the turn itself (workflows/turn/handoffs.ts); 'agent': a sub-agent, run as a child turn (see `AgentToolSpec`). */
  kind: 'server' | 'client' | 'handoff' | 'agent';
  /** With kind 'agent': the sub-agent's settings. */
  agent?: AgentToolSpec;
  outputSchema?: JsonSchema;
  /** 'never': runs at once; 'always': every call parks; 'policy': a function on the worker decides per call. */
  approval: 'never' | 'always' | 'policy';
  /** When set, only these approvers (or members of `approverGroups`) may decide this tool's calls. */
  approvers?: string[];
  /** When set, members of these groups may decide this tool's calls. */
  approverGroups?: string[];
  /** A quorum, the requester's exclusion, escalation steps (`defineTool`'s `approval` object). */
  rule?: ApprovalRuleSpec;
  activityOptions?: ActivityCallOptions;
  /**
   * The tool undoes what a running call started elsewhere (a remote A2A task) when the turn is
   * cancelled: the turn then runs `cancelToolCall` for the call (workflows/calls/cancellable-calls.ts).
   */
  cancellable?: true;
}

/** A sub-agent as the workflow knows it: the child turn's settings, data only. */
export interface AgentToolSpec {
  model: ModelSettings;
  system?: string;
  /** The tools the sub-agent is offered (none when absent). */
  tools?: string[];
  /** A typed final answer: the child turn's `output` becomes the tool's result. */
  output?: { schema: JsonSchema; name?: string; maxRetries?: number };
  maxSteps?: number;
  /** The tool has a prompt function: the worker writes the child's user message from the input. */
  prompt?: true;
  /** How deep agent tools may nest (the worker's `maxAgentDepth`, default 3). */
  maxDepth: number;
}

export type ApprovalDecision = 'approved' | 'denied' | 'user-approval';

/** What the worker decided about one tool call before anything runs. */
export type ToolCallDisposition =
  | { kind: 'invalid'; error: string }
  | { kind: 'execute'; input: unknown }
  | { kind: 'client'; input: unknown }
  | { kind: 'decided'; input: unknown; approved: boolean; reason?: string }
  | { kind: 'needs-approval'; input: unknown; reason?: string };

export interface ExecuteToolInput {
  toolName: string;
  toolCallId: string;
  input: unknown;
  idempotencyKey: string;
}

/** A running call of a `cancellable` tool, cancelled with its turn. */
export interface CancelToolCallInput extends ExecuteToolInput {
  /** When the call started to run (milliseconds since the epoch, the turn's clock). */
  startedAtMs: number;
}

export interface ExecuteToolResult {
  output: unknown;
  isError: boolean;
}

/** The turn's tools as its first model step describes them, and whether the worker nudges approvers. */
export interface DescribedTools {
  specs: ToolSpec[];
  notifications?: { expiringBeforeMs: number };
  /** MCP servers whose tools a turn offered all tools goes without, because they did not answer. */
  leftOut?: ToolServerLeftOut[];
}

/** An MCP server left out of a turn's tools, and why (its listing failed or timed out, or it is down since an earlier one did). */
export interface ToolServerLeftOut {
  server: string;
  reason: string;
}

/**
 * An MCP server a model step needs (a tool the turn names, or a `required` server) and could not
 * list. The step's activity is retried until `giveUpAt`, then fails with `McpServerUnavailable`.
 */
export interface ToolServerUnavailable {
  server: string;
  /** Why its listing failed, as the worker saw it. */
  error: string;
  /** When the step first found it unavailable (ISO 8601). */
  since: string;
  /** `since` plus the server's `unavailableTimeout`: the step gives up on it then (ISO 8601). */
  giveUpAt: string;
}

/** A model step waiting for MCP servers: the attempt that last failed for want of them, and which. */
export interface ToolServersWait {
  step: number;
  attempt: number;
  servers: ToolServerUnavailable[];
}
