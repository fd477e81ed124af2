/**
 * Steering a conversation: `regenerate`, `editMessage` and `switchBranch`, and the `branches`
 * query (docs/conversations.md, "Branches").
 *
 * A regenerate or an edit queues a fork: a message whose turn starts on a new branch. A turn that
 * runs (or is parked) then is superseded first, exactly as a newer message under the `supersede`
 * policy does it: each parked call gets its one result, and the turn's messages stay the old
 * branch's history. The fork happens when the message's turn starts, so its position is taken
 * from the history once the abandoned turn is in it.
 */
import * as wf from '@temporalio/workflow';
import { branchesQuery, editMessageUpdate, regenerateUpdate, supersedeTurnSignal, switchBranchUpdate } from '../messages/definitions.js';
import { setUpdateHandler } from '../messages/message-handlers.js';
import { describeShapeError, editMessageInputSchema, regenerateInputSchema, switchBranchInputSchema } from '../messages/message-schemas.js';
import { rejection } from '../messages/rejection.js';
import { BRANCHES_PATCH, forkBranch, hasBranch, listBranches, switchBranch } from './conversation-branches.js';
import type { BranchTurnResult, ConversationCarryOver, EditMessageInput, Message, QueuedFork, QueuedMessage, RegenerateInput, SendMessageInput, SendMessageResult } from '../types/index.js';

/** What steering needs of the conversation. */
export interface SteeringHost {
  readonly conversationId: string;
  readonly state: ConversationCarryOver;
  startNextTurn(): Promise<void>;
  remember(messageId: string, result: SendMessageResult): void;
  /** Why a message's parts cannot go to its turn (as `sendMessage` checks them), or undefined. */
  contentProblem(request: SendMessageInput): string | undefined;
}

/** The user message a regenerate answers again: the named turn's, else the running turn's, else the branch's last. */
function regenerated(state: ConversationCarryOver, request: RegenerateInput): string | undefined {
  const current = state.current;
  if (request.turn !== undefined) {
    if (current?.turnWorkflowId === request.turn && !current.handoff) return current.messageId;
    return state.messageIds?.find(([, , turn]) => turn === request.turn)?.[0];
  }
  return current && !current.handoff ? current.messageId : state.messageIds?.at(-1)?.[0];
}

function onBranch(state: ConversationCarryOver, messageId: string): boolean {
  return state.current?.messageId === messageId || (state.messageIds ?? []).some(([id]) => id === messageId);
}

function checked<T>(parse: () => { success: true; data: unknown } | { success: false; error: Parameters<typeof describeShapeError>[0] }, name: string): T {
  const shape = parse();
  if (!shape.success) throw rejection('InvalidRequest', `Invalid ${name}: ${describeShapeError(shape.error)}`);
  return shape.data as T;
}

/** Branching needs the queue empty: a queued message was sent for the path a fork leaves. */
function queueProblem(state: ConversationCarryOver, name: string): void {
  if (state.queue.length > 0) throw rejection('InvalidRequest', `Invalid ${name}: messages are queued; wait until their turns have started`);
}

export function installSteering(host: SteeringHost): void {
  const { state } = host;
  setUpdateHandler(regenerateUpdate, async (request) => fork(host, regenerated(state, request)!, 'regenerate', request), {
    validator: (raw) => {
      const request = checked<RegenerateInput>(() => regenerateInputSchema().safeParse(raw), 'regenerate');
      queueProblem(state, 'regenerate');
      if (regenerated(state, request) === undefined) throw rejection('InvalidRequest', `Invalid regenerate: ${request.turn !== undefined ? `turn "${request.turn}" answered no user message of the current branch` : 'the conversation has no user message to answer again'}`);
    },
  });
  setUpdateHandler(editMessageUpdate, async (request) => fork(host, request.messageId, 'edit', request), {
    validator: (raw) => {
      const request = checked<EditMessageInput>(() => editMessageInputSchema().safeParse(raw), 'editMessage');
      queueProblem(state, 'editMessage');
      if (!onBranch(state, request.messageId)) throw rejection('InvalidRequest', `Invalid editMessage: message "${request.messageId}" is not a user message of the current branch`);
      const problem = host.contentProblem({ text: request.text, ...(request.content ? { content: request.content } : {}), ...(request.options ? { options: request.options } : {}) });
      if (problem) throw rejection('InvalidRequest', `Invalid editMessage: ${problem}`);
    },
  });
  setUpdateHandler(
    switchBranchUpdate,
    async ({ branch }) => {
      wf.patched(BRANCHES_PATCH);
      switchBranch(state, branch);
      return listBranches(state);
    },
    {
      validator: (raw) => {
        const { branch } = checked<{ branch: string }>(() => switchBranchInputSchema().safeParse(raw), 'switchBranch');
        if (!hasBranch(state, branch)) throw rejection('InvalidRequest', `Invalid switchBranch: the conversation has no branch "${branch}"`);
        if (state.current || state.queue.length > 0) throw rejection('InvalidRequest', 'Invalid switchBranch: a turn is running or queued; switch once it has ended');
      },
    },
  );
  wf.setHandler(branchesQuery, () => listBranches(state));
}

/** Queues the fork's turn, supersedes a running turn, and starts the fork at once when nothing runs. */
async function fork(host: SteeringHost, target: string, reason: QueuedFork['reason'], request: RegenerateInput & Partial<EditMessageInput>): Promise<BranchTurnResult> {
  wf.patched(BRANCHES_PATCH);
  const { state } = host;
  const branch = `branch-${(state.branchCount = (state.branchCount ?? 0) + 1)}`;
  const turnNumber = ++state.turnCount;
  const turnWorkflowId = `${host.conversationId}/turn-${turnNumber}`;
  const messageId = reason === 'edit' ? (request.newMessageId ?? target) : target;
  const running = state.current;
  const queued: QueuedMessage = {
    messageId,
    text: request.text ?? '',
    ...(request.content ? { content: request.content } : {}),
    ...(request.options ? { options: request.options } : {}),
    turnWorkflowId,
    turnNumber,
    fork: { branch, reason, target, ...(reason === 'regenerate' ? { resend: true } : {}) },
  };
  state.queue.push(queued);
  const result: BranchTurnResult = { messageId, turnWorkflowId, turnNumber, queued: running !== undefined, branch, ...(running ? { supersededTurn: running.turnWorkflowId } : {}) };
  host.remember(messageId, result);
  if (running) {
    wf.getExternalWorkflowHandle(running.turnWorkflowId)
      .signal(supersedeTurnSignal, { reason: `The conversation was steered to ${branch} (${reason === 'edit' ? 'an edited message' : 'a regenerated answer'}).`, messageId })
      .catch((error: unknown) => wf.log.warn('Could not supersede the running turn', { turn: running.turnWorkflowId, error: String(error) }));
  } else {
    await host.startNextTurn();
  }
  return result;
}

/**
 * Makes the queued message's fork, as its turn starts: the new branch keeps the history before the
 * edited message, or up to and with the regenerated one. Returns the messages of the new turn.
 */
export function startFork(state: ConversationCarryOver, next: QueuedMessage, message: Message): { messages: Message[]; resent?: true } {
  const { fork } = next;
  if (!fork) return { messages: [...state.history, message] };
  const entries = state.messageIds ?? [];
  const entry = entries.find(([id]) => id === fork.target);
  const at = entry ? entry[1] + (fork.resend ? 1 : 0) : state.history.length;
  forkBranch(state, fork.branch, fork.reason, at);
  if (fork.resend && entry) {
    // The same user message, answered by the new turn.
    state.messageIds = (state.messageIds ?? []).map((kept) => (kept[0] === entry[0] ? [kept[0], kept[1], next.turnWorkflowId] : kept));
    return { messages: [...state.history], resent: true };
  }
  return { messages: [...state.history, message] };
}
