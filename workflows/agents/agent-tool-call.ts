/**
 * An agent tool's call (`defineAgentTool`): the sub-agent runs as a child `agentTurn`, with the
 * workflow id `<parent turn id>/<toolCallId>` (the same on every replay and retry), on the same
 * task queue. Its approvals and client tools park in the child, as in any turn, and its
 * listings name the parent (`parentTurn`, the `TurnpikeParentTurnId` search attribute). The
 * child's answer is the call's one result: its typed `output` when it has one, else its text;
 * any other ending is an error result naming it. The child's usage is added to the parent's, and
 * a budgeted parent counts its tool calls; a budgeted parent gives each child a share of what is
 * left of its budget (child-budgets.ts).
 *
 * Cancelling the parent, or superseding it, cancels the child (its scope below; `cancelAll`):
 * the child settles each of its open calls with a cancelled result and ends `cancelled`, and
 * only then does the parent settle this call. A child is never terminated (`REQUEST_CANCEL` when
 * the parent closes), since a terminated turn leaves its calls without results.
 *
 * Depth and cycles: `parentTurn.path` holds the agent tool names from the root turn down; a call
 * that would nest deeper than `maxAgentDepth` (the turn's, else the worker's, default 3), or
 * whose tool is already on the path, gets an error result and starts no child.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import { AGENT_TURN_WORKFLOW } from '../messages/definitions.js';
import { errorSettlement, type Settlement } from '../calls/tool-results.js';
import { closeChildShare, takeChildShare } from './child-budgets.js';
import type { TurnContext } from '../context/turn-context.js';
import { addUsage } from '../context/usage.js';
import { activityPlacement, childPlacement } from '../context/tenant-placement.js';
import type { AgentTurnInput, AgentTurnResult, ChildTurnView, ParentTurn, ToolCallPart, ToolSpec } from '../types/index.js';

/** The workflow patch of agent tools (docs/versioning.md). */
export const AGENT_TOOLS_PATCH = '0.2.0-agent-tools';
/** The workflow patch that counts a child's tool calls in its budgeted parent's spend (docs/versioning.md). */
export const CHILD_TOOL_CALLS_PATCH = '0.3.0-child-tool-calls';

type AgentTurnWorkflow = (input: AgentTurnInput) => Promise<AgentTurnResult>;

/**
 * An agent tool's call that may not start a child, answered at once: before any approval or
 * park, as the step's calls are classified (in the workflow task of the model step's result, so
 * the patch is asked at the same point on replay as live, never after a decision that may arrive
 * in another task). Undefined when the call goes on.
 */
export function refuseAgentCall(turn: TurnContext, spec: ToolSpec, call: ToolCallPart, input: unknown): Settlement | undefined {
  if (!wf.patched(AGENT_TOOLS_PATCH) || !spec.agent) {
    return { ...errorSettlement('error', `Agent tool "${call.toolName}" needs a worker that runs agent tools; no sub-agent was started.`), input };
  }
  const refusal = depthRefusal(turn, call.toolName, spec.agent.maxDepth);
  return refusal ? { ...errorSettlement('error', refusal), input } : undefined;
}

/** Runs an agent tool's call as a child turn (`refuseAgentCall` let it through); returns the call's one result. */
export async function runAgentCall(turn: TurnContext, spec: ToolSpec, call: ToolCallPart, input: unknown, outcome: 'executed' | 'approved'): Promise<Settlement> {
  const agent = spec.agent!;
  const parentTurnId = wf.workflowInfo().workflowId;
  const view: ChildTurnView = { toolCallId: call.toolCallId, toolName: call.toolName, turnId: `${parentTurnId}/${call.toolCallId}`, status: 'starting' };
  const scope = new wf.CancellationScope();
  turn.agentCalls.add(view, scope);
  try {
    const result = await scope.run(async () => {
      const prompt = agent.prompt ? await promptActivity()({ toolName: call.toolName, input }) : JSON.stringify(input);
      const child = await wf.startChild<AgentTurnWorkflow>(AGENT_TURN_WORKFLOW, {
        workflowId: view.turnId,
        taskQueue: wf.workflowInfo().taskQueue,
        args: [childInput(turn, spec, call, prompt)],
        // Who started the parent reads the child too (the HTTP API's reading rights rest on this memo).
        ...startedByMemo(),
        // The parent's tenant and priority (context/tenant-placement.ts).
        ...childPlacement(),
        parentClosePolicy: 'REQUEST_CANCEL',
        cancellationType: wf.ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      });
      view.status = 'running';
      turn.publisher.publish({ type: 'agent-started', step: turn.step, toolCallId: call.toolCallId, toolName: call.toolName, turnId: view.turnId });
      return child.result();
    });
    if (result.usage) addUsage(turn.usage, result.usage);
    countChildToolCalls(turn, result);
    return { ...answerOf(call.toolName, result, outcome), input };
  } catch (error) {
    if (wf.isCancellation(error)) {
      const when = view.status === 'starting' ? 'before its sub-agent started' : `with its sub-agent (${view.turnId}), which gave each of its open calls a cancelled result`;
      return { ...errorSettlement('cancelled', `The call to agent tool "${call.toolName}" was cancelled ${when}.`), input };
    }
    const cause = error instanceof wf.ChildWorkflowFailure || error instanceof wf.ActivityFailure ? (error.cause?.message ?? error.message) : String(error);
    return { ...errorSettlement('error', `Agent tool "${call.toolName}" failed: ${cause}`), input };
  } finally {
    turn.agentCalls.delete(call.toolCallId);
    // Its spend is counted (above) in place of its share.
    closeChildShare(turn, call.toolCallId);
  }
}

/**
 * Whether a call of this agent tool would start a child as far as the turn's input tells (not
 * too deep, no cycle): the step's calls that may start one share the parent's budget.
 */
export function mayStartChild(turn: TurnContext, spec: ToolSpec, toolName: string): boolean {
  return spec.kind === 'agent' && spec.agent !== undefined && depthRefusal(turn, toolName, spec.agent.maxDepth) === undefined;
}

/** What is wrong with a turn's agent tool fields (`maxAgentDepth`, `parentTurn`), or undefined. */
export function agentInputProblem(input: AgentTurnInput): string | undefined {
  const depth = input.maxAgentDepth;
  if (depth !== undefined && (!Number.isInteger(depth) || depth < 0)) return 'maxAgentDepth must be an integer of at least 0';
  const parent = input.parentTurn as Partial<ParentTurn> | undefined;
  if (parent === undefined) return undefined;
  const wellFormed =
    parent !== null && typeof parent === 'object' && typeof parent.turnId === 'string' && typeof parent.toolCallId === 'string' && Array.isArray(parent.path) && parent.path.every((name) => typeof name === 'string');
  return wellFormed ? undefined : 'parentTurn must be { turnId, toolCallId, path: string[] } (set by a parent turn)';
}

/** Why this call may not start a child: too deep, or a cycle; undefined when it may. */
function depthRefusal(turn: TurnContext, toolName: string, workerMaxDepth: number): string | undefined {
  const above = turn.input.parentTurn?.path ?? [];
  const path = [...above, toolName].join(' > ');
  if (above.includes(toolName)) {
    return `Agent tool "${toolName}" is already running further up this chain of agents (${path}); calling it again would be a cycle, so no sub-agent was started.`;
  }
  const maxDepth = turn.input.maxAgentDepth ?? workerMaxDepth;
  if (above.length + 1 > maxDepth) {
    return `Agent tool "${toolName}" would nest agents ${above.length + 1} deep (${path}), deeper than the limit of ${maxDepth}; no sub-agent was started.`;
  }
  return undefined;
}

function childInput(turn: TurnContext, spec: ToolSpec, call: ToolCallPart, prompt: string): AgentTurnInput {
  const agent = spec.agent!;
  const parent = turn.input;
  return {
    model: agent.model,
    ...(agent.system !== undefined ? { system: agent.system } : {}),
    // A sub-agent is offered only the tools it lists.
    tools: agent.tools ?? [],
    ...(agent.maxSteps !== undefined ? { maxSteps: agent.maxSteps } : {}),
    ...(agent.output ? { output: agent.output } : {}),
    messages: [{ role: 'user', content: prompt }],
    parentTurn: { turnId: wf.workflowInfo().workflowId, toolCallId: call.toolCallId, path: [...(parent.parentTurn?.path ?? []), call.toolName] },
    ...(parent.conversationId !== undefined ? { conversationId: parent.conversationId } : {}),
    ...(parent.approvalTimeout !== undefined ? { approvalTimeout: parent.approvalTimeout } : {}),
    ...(parent.clientToolTimeout !== undefined ? { clientToolTimeout: parent.clientToolTimeout } : {}),
    ...(parent.modelCallOptions !== undefined ? { modelCallOptions: parent.modelCallOptions } : {}),
    ...(parent.modelTaskQueue !== undefined ? { modelTaskQueue: parent.modelTaskQueue } : {}),
    ...(parent.maxAgentDepth !== undefined ? { maxAgentDepth: parent.maxAgentDepth } : {}),
    ...takeChildShare(turn, call.toolCallId),
    // The parent awaits the child's result; the conversation's turnFinished signal is not for it.
    notifyParent: false,
  };
}

/**
 * A budgeted parent counts the tool calls of a child that ended in its own spend: the child's
 * spend (its calls and its own children's), which a child of a budgeted parent always reports.
 * Patched: a parent counted only its own calls before, and so parked later. Asked only when it
 * matters (a budget, and a child that made calls), in the task of the child's result.
 */
function countChildToolCalls(turn: TurnContext, result: AgentTurnResult): void {
  const calls = result.spend?.toolCalls ?? result.toolCalls?.length ?? 0;
  if (!turn.budgetLimits || calls === 0 || !wf.patched(CHILD_TOOL_CALLS_PATCH)) return;
  turn.childToolCalls += calls;
}

/** The child's ending as the call's result. */
function answerOf(toolName: string, result: AgentTurnResult, outcome: 'executed' | 'approved'): Settlement {
  const usage = { usage: result.usage };
  if (result.status === 'completed') {
    return { outcome, output: result.output !== undefined ? result.output : result.text, isError: false, ...usage };
  }
  const said = result.text ? ` Its last text: ${result.text}` : '';
  return {
    ...errorSettlement(result.status === 'cancelled' ? 'cancelled' : 'error', `The sub-agent of "${toolName}" ended with status "${result.status}" without an answer.${said}`),
    ...usage,
  };
}

/** The parent's `turnpikeStartedBy` memo (`STARTED_BY_MEMO_KEY` of the client), for its child. */
function startedByMemo(): { memo?: Record<string, unknown> } {
  const startedBy = wf.workflowInfo().memo?.[STARTED_BY_MEMO_KEY];
  return typeof startedBy === 'string' ? { memo: { [STARTED_BY_MEMO_KEY]: startedBy } } : {};
}

const STARTED_BY_MEMO_KEY = 'turnpikeStartedBy';

/** The prompt function runs on the worker: a short activity, never retried (a prompt that throws will throw again). */
function promptActivity() {
  return wf.proxyActivities<TurnpikeActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['AgentToolPromptFailed'] }, ...activityPlacement() }).agentToolPrompt;
}
