/**
 * `agentConversation`: one per conversation id. Keeps the history server-side and runs each
 * user message as a child `agentTurn` (`<conversationId>/turn-<n>`), so a backend sends only
 * the new text, never the conversation.
 *
 * Turns report back by the `turnFinished` signal rather than through a child handle, which lets
 * the conversation continue-as-new at any time — also while a turn is parked for days — with
 * nothing lost: the parked turn keeps running and signals whichever run is current.
 */
import * as wf from '@temporalio/workflow';
import {
  conversationEventsQuery,
  conversationStateQuery,
  historyQuery,
  sendMessageUpdate,
  supersedeTurnSignal,
  turnFinishedSignal,
} from '../messages/definitions.js';
import { agentTurn } from '../turn/agent-turn.js';
import { agentsProblem, agentTurnSettings, followHandoff, handoffTurnId, startingAgent } from './conversation-agents.js';
import { EventStream } from '../stream/event-stream.js';
import { setSignalHandler, setUpdateHandler } from '../messages/message-handlers.js';
import type { ConversationEvent } from '../types/turn-events.js';
import { budgetProblem } from '../budgets/budget-spend.js';
import { absorbTurnSpend, budgetForTurn } from '../budgets/conversation-budget.js';
import { describeShapeError, sendMessageInputSchema, turnFinishedInputSchema } from '../messages/message-schemas.js';
import { rejection } from '../messages/rejection.js';
import { agentConversationIdKey } from '../context/search-attributes.js';
import { contentProblem, outputProblem, userMessage } from './conversation-messages.js';
import { describeConversation, historyPage } from './conversation-views.js';
import { childPlacement } from '../context/tenant-placement.js';
import { installSteering, startFork } from './conversation-steering.js';
import type {
  AgentConversationInput,
  AgentTurnInput,
  ConversationCarryOver,
  HistoryPageRequest,
  Message,
  ModelSettings,
  QueuedMessage,
  SendMessageInput,
  SendMessageResult,
  TurnFinishedInput,
  TurnOutputSpec,
} from '../types/index.js';

/** Replies remembered for idempotent sendMessage; older message ids may start a turn again. */
const REMEMBERED_MESSAGE_IDS = 1_000;
/**
 * Events of the conversation's stream handed to the next run at continue-as-new; older ones
 * are dropped, so the carried state stays small. A subscriber further behind resumes at the
 * oldest one kept.
 */
const CARRIED_STREAM_EVENTS = 200;

export async function agentConversation(input: AgentConversationInput): Promise<never> {
  const conversation = new Conversation(input);
  conversation.installHandlers();
  return conversation.run();
}

class Conversation {
  private readonly conversationId: string;
  private readonly state: ConversationCarryOver;
  private stream!: EventStream<ConversationEvent>;

  constructor(private readonly input: AgentConversationInput) {
    this.conversationId = input.conversationId ?? wf.workflowInfo().workflowId;
    this.state = input.carried ?? { history: [], turnCount: 0, queue: [], finished: [], seen: [], failedTurns: [], runs: 0 };
    this.state.runs += input.carried ? 1 : 0;
    // The active agent (with agents) is carried across continue-as-new.
    if (this.state.agent === undefined && !agentsProblem(input)) {
      const agent = startingAgent(input);
      if (agent !== undefined) this.state.agent = agent;
    }
  }

  installHandlers(): void {
    this.stream = new EventStream<ConversationEvent>(conversationEventsQuery, this.state.stream);
    setUpdateHandler(sendMessageUpdate, async (request) => this.sendMessage(request), {
      validator: (request) => {
        const shape = sendMessageInputSchema().safeParse(request);
        if (!shape.success) throw rejection('InvalidRequest', `Invalid sendMessage: ${describeShapeError(shape.error)}`);
        // A conversation started with settings it cannot run takes no message.
        const settings = agentsProblem(this.input);
        if (settings) throw rejection('InvalidRequest', `Invalid conversation settings: ${settings}`);
        const budget = this.input.budget !== undefined ? budgetProblem(this.input.budget, "the conversation's budget") : undefined;
        const problem = budget ?? contentProblem(this.input, this.state, shape.data as SendMessageInput) ?? outputProblem(this.input, this.state, shape.data as SendMessageInput);
        if (problem) throw rejection('InvalidRequest', `Invalid sendMessage: ${problem}`);
      },
    });
    setSignalHandler(turnFinishedSignal, (finished) => {
      const shape = turnFinishedInputSchema().safeParse(finished);
      if (!shape.success) {
        wf.log.warn('Ignored an invalid turnFinished signal', { error: describeShapeError(shape.error) });
        return;
      }
      this.state.finished.push(finished);
    });
    installSteering({
      conversationId: this.conversationId,
      state: this.state,
      startNextTurn: () => this.startNextTurn(),
      remember: (messageId, result) => this.remember(messageId, result),
      contentProblem: (request) => contentProblem(this.input, this.state, request),
    });
    wf.setHandler(historyQuery, (request?: HistoryPageRequest) => historyPage(this.state, request));
    wf.setHandler(conversationStateQuery, () => describeConversation(this.conversationId, this.input, this.state));
  }

  async run(): Promise<never> {
    wf.upsertSearchAttributes([{ key: agentConversationIdKey, value: this.conversationId }]);
    for (;;) {
      await wf.condition(
        () => this.finishedCurrent() !== undefined || (!this.state.current && this.state.queue.length > 0) || wf.workflowInfo().continueAsNewSuggested,
      );
      const handoff = this.absorbFinishedTurn();
      if (handoff) await this.startHandoffTurn(handoff);
      if (!this.state.current && this.state.queue.length > 0) await this.startNextTurn();
      if (wf.workflowInfo().continueAsNewSuggested) {
        // Every handler done first, so no accepted message is lost between runs; the stream's
        // long polls are ended first, and its subscribers follow to the next run.
        this.stream.close();
        await wf.condition(wf.allHandlersFinished);
        const carried: ConversationCarryOver = { ...this.state, stream: this.stream.state(CARRIED_STREAM_EVENTS) };
        await wf.continueAsNew<typeof agentConversation>({ ...this.input, conversationId: this.conversationId, carried });
      }
    }
  }

  private async sendMessage(raw: SendMessageInput): Promise<SendMessageResult> {
    const request = sendMessageInputSchema().parse(raw) as SendMessageInput;
    if (request.messageId) {
      const earlier = this.state.seen.find(([id]) => id === request.messageId);
      if (earlier) return earlier[1];
    }
    const messageId = request.messageId ?? wf.uuid4();
    const turnNumber = ++this.state.turnCount;
    const turnWorkflowId = `${this.conversationId}/turn-${turnNumber}`;
    const queued = this.state.current !== undefined || this.state.queue.length > 0;
    const { content } = request;
    this.state.queue.push({ messageId, text: request.text, ...(content ? { content } : {}), ...(request.options ? { options: request.options } : {}), ...(request.output ? { output: request.output } : {}), turnWorkflowId, turnNumber });

    const policy = request.policy ?? this.input.policy ?? 'queue';
    const current = this.state.current;
    const result: SendMessageResult = {
      messageId,
      turnWorkflowId,
      turnNumber,
      queued,
      ...(policy === 'supersede' && current ? { supersededTurn: current.turnWorkflowId } : {}),
    };
    this.remember(messageId, result);
    if (policy === 'supersede' && current) {
      // Fire and forget: the turn settles its parked calls and reports back by turnFinished.
      wf.getExternalWorkflowHandle(current.turnWorkflowId)
        .signal(supersedeTurnSignal, { reason: 'A newer user message superseded this turn.', messageId })
        .catch((error: unknown) => wf.log.warn('Could not supersede the running turn', { turn: current.turnWorkflowId, error: String(error) }));
    }
    // When nothing runs, start the turn before answering, so the id returned is a running
    // workflow the caller can query or await at once. Queued turns start from run().
    if (!queued) await this.startNextTurn();
    return result;
  }

  private remember(messageId: string, result: SendMessageResult): void {
    this.state.seen.push([messageId, result]);
    if (this.state.seen.length > REMEMBERED_MESSAGE_IDS) this.state.seen.splice(0, this.state.seen.length - REMEMBERED_MESSAGE_IDS);
  }

  private finishedCurrent(): TurnFinishedInput | undefined {
    const current = this.state.current;
    return current ? this.state.finished.find((finished) => finished.turnWorkflowId === current.turnWorkflowId) : undefined;
  }

  /**
   * Appends the user message and what the finished turn added; a failed turn keeps the user
   * message. A turn that went on after a handoff adds only its own messages. Returns the
   * handoff the turn ended with, once the new agent is the active one.
   */
  private absorbFinishedTurn(): { from: string; to: string; current: NonNullable<ConversationCarryOver['current']> } | undefined {
    const finished = this.finishedCurrent();
    const current = this.state.current;
    if (!finished || !current) return undefined;
    if (!current.handoff && !current.resent) {
      this.state.history.push(userMessage(current));
      (this.state.messageIds ??= []).push([current.messageId, this.state.history.length - 1, current.turnWorkflowId]);
    }
    if (finished.result) this.state.history.push(...finished.result.messages);
    else this.state.failedTurns.push(current.turnWorkflowId);
    absorbTurnSpend(this.input, this.state, finished);
    // Reports of turns that are not current (a stale duplicate) are dropped with it.
    this.state.finished = this.state.finished.filter((entry) => entry.turnWorkflowId !== current.turnWorkflowId);
    this.state.current = undefined;
    this.stream.publish({ type: 'turn-ended', turnId: current.turnWorkflowId, turnNumber: current.turnNumber, failed: !finished.result });
    const handoff = followHandoff(this.input, this.state, finished.result);
    if (!handoff) return undefined;
    this.stream.publish({ type: 'handoff', turnId: current.turnWorkflowId, ...handoff });
    // A newer message superseded the turn: that message goes to the new agent instead.
    return finished.result?.supersededBy === undefined ? { ...handoff, current } : undefined;
  }

  /** Starts the turn of the agent a handoff named, on the same user message, which the history holds already. */
  private async startHandoffTurn({ from, to, current }: { from: string; to: string; current: NonNullable<ConversationCarryOver['current']> }): Promise<void> {
    const turnWorkflowId = handoffTurnId(this.conversationId, current.turnNumber, this.state.handoffsInARow ?? 1);
    const { handoff: _earlier, ...message } = current;
    this.state.current = { ...message, turnWorkflowId, handoff: { from, to } };
    // The message's typed answer is asked of whichever agent answers it.
    await this.startTurn(turnWorkflowId, current.turnNumber, current.messageId, agentTurnSettings(this.input, this.state), [...this.state.history], current.output);
  }

  /** Starts the first queued message's turn; `current` is set before the first await, so it never starts twice. */
  private async startNextTurn(): Promise<void> {
    const next = this.state.queue.shift() as QueuedMessage;
    // A user message: the agents may hand the conversation on again.
    if (this.state.handoffsInARow) this.state.handoffsInARow = 0;
    // A regenerate or an edit forks its branch here (conversation-steering.ts).
    const { messages, resent } = startFork(this.state, next, userMessage(next));
    this.state.current = { turnWorkflowId: next.turnWorkflowId, turnNumber: next.turnNumber, messageId: next.messageId, text: next.text, ...(next.content ? { content: next.content } : {}), ...(next.output ? { output: next.output } : {}), ...(resent ? { resent } : {}) };
    const options = { ...agentTurnSettings(this.input, this.state), ...next.options };
    await this.startTurn(next.turnWorkflowId, next.turnNumber, next.messageId, options, messages, next.output);
  }

  private async startTurn(turnWorkflowId: string, turnNumber: number, messageId: string, options: ReturnType<typeof agentTurnSettings>, messages: Message[], output?: TurnOutputSpec): Promise<void> {
    const budget = budgetForTurn(this.input, this.state);
    const turnInput: AgentTurnInput = {
      conversationId: this.conversationId,
      model: options.model as ModelSettings,
      messages,
      ...(options.system !== undefined ? { system: options.system } : {}),
      ...(options.tools !== undefined ? { tools: options.tools } : {}),
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      ...(options.approvalTimeout !== undefined ? { approvalTimeout: options.approvalTimeout } : {}),
      ...(options.clientToolTimeout !== undefined ? { clientToolTimeout: options.clientToolTimeout } : {}),
      ...(options.modelCallOptions !== undefined ? { modelCallOptions: options.modelCallOptions } : {}),
      ...(this.input.modelTaskQueue !== undefined ? { modelTaskQueue: this.input.modelTaskQueue } : {}),
      ...(options.handoffs !== undefined ? { handoffs: options.handoffs } : {}),
      ...(options.handoffsRefused !== undefined ? { handoffsRefused: options.handoffsRefused } : {}),
      ...(output !== undefined ? { output } : {}),
      ...(budget ? { budget, budgetIncrement: this.input.budget } : {}),
    };
    this.stream.publish({ type: 'turn-started', turnId: turnWorkflowId, turnNumber, messageId });
    await wf.startChild(agentTurn, {
      workflowId: turnWorkflowId,
      args: [turnInput],
      // The conversation's tenant and priority (context/tenant-placement.ts).
      ...childPlacement(),
      // The turn outlives a continue-as-new of the conversation and reports back by signal.
      parentClosePolicy: 'ABANDON',
      cancellationType: 'ABANDON',
    });
  }
}
