/**
 * What a conversation's queries answer: a page of its history (of the current branch or another)
 * and its state. Read-only: they change nothing and send no command.
 */
import { conversationBudgetState } from '../budgets/conversation-budget.js';
import type { AgentConversationInput, ConversationCarryOver, ConversationState, HistoryPage, HistoryPageRequest, Message } from '../types/index.js';
import { branchMessages, currentBranch, hasBranch } from './conversation-branches.js';

const DEFAULT_PAGE = 100;

/** The `history` query: up to 1,000 messages from `offset`, of the current branch or the one named. */
export function historyPage(state: ConversationCarryOver, request: HistoryPageRequest = {}): HistoryPage {
  const offset = Math.max(0, Math.floor(request.offset ?? 0));
  const limit = Math.min(1_000, Math.max(1, Math.floor(request.limit ?? DEFAULT_PAGE)));
  // Another branch's messages: its shared prefix and its own (conversation-branches.ts).
  const history = request.branch === undefined ? state.history : hasBranch(state, request.branch) ? branchMessages(state, request.branch) : [];
  const messages: Message[] = history.slice(offset, offset + limit);
  return { messages, offset, total: history.length };
}

/** The `conversationState` query. */
export function describeConversation(conversationId: string, input: AgentConversationInput, state: ConversationCarryOver): ConversationState {
  const current = state.current;
  return {
    conversationId,
    policy: input.policy ?? 'queue',
    turns: state.turnCount,
    messages: state.history.length,
    ...(current ? { currentTurn: { turnWorkflowId: current.turnWorkflowId, turnNumber: current.turnNumber } } : {}),
    queued: state.queue.map(({ messageId, turnWorkflowId }) => ({ messageId, turnWorkflowId })),
    failedTurns: [...state.failedTurns],
    runs: state.runs,
    ...(state.agent !== undefined ? { agent: state.agent } : {}),
    ...conversationBudgetState(input, state),
    ...(state.branches ? { branch: currentBranch(state) } : {}),
  };
}
