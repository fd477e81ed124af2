/**
 * `POST /api/chat`: the endpoint a `useChat` front end (AI SDK 6/7) talks to, unchanged. The
 * chat id is the conversation id. The response is the AI SDK UI message stream (SSE with
 * `x-vercel-ai-ui-message-stream: v1`) of the conversation's turn, until the turn ends or parks.
 *
 * - A request whose last message is the user's starts that message's turn (`sendMessage`,
 *   idempotent by the UI message id) and streams it from its first event.
 * - A request whose last message is the assistant's carries approval responses
 *   (`addToolApprovalResponse`): each becomes an `approveToolCall` on the conversation's current
 *   turn — checked there against the parked call: the approvalId, the hash of the input the
 *   browser showed (an edited input is refused as `InputHashMismatch`) and the approver, who is
 *   the authenticated caller, never a name from the body. The stream then continues after the
 *   approval request.
 * - It may carry budget decisions instead (or too): a `data-budget` part the client set to
 *   `responded` becomes `approveToolCall` on the budget approval (extend, by `extendBy` when
 *   given, or stop), checked the same way. The response then starts with each decision as the
 *   part's `decided` state, from the turn's decision record (so a budget decided elsewhere in the
 *   meantime shows as it was decided), and continues after the budget request.
 *
 * - `regenerate()` (trigger `regenerate-message`) answers the last user message again, and
 *   `regenerate({ messageId })` the user message the request ends with, which `messageId` (that
 *   message, or an answer to it) names (ui-chat-regenerate.ts); a message sent with the id of an
 *   earlier one (useChat's edit: `sendMessage({ text, messageId })`) replaces it; each on a new
 *   branch of the conversation, whose turn this request streams.
 *
 * A turn with a typed answer (`output` in the body of the request that starts it) streams it as
 * a `data-output` part too; a continued message that holds one keeps it streaming.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TurnpikeRejectedError, type TurnpikeClient } from '../client/turnpike-client.js';
import { turnEventsQuery } from '../workflows/messages/definitions.js';
import { inputHash } from '../workflows/messages/input-hash.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';
import type { DecisionRecord, ModelSettings, TurnBudget } from '../workflows/types/index.js';
import { modelSchema, outputSchema } from './request-schemas.js';
import { budgetResponses, isApprovalResponse, type ApprovalResponsePart, type BudgetResponse } from './ui-chat-responses.js';
import type { UiMessageChunk } from './ui-message-chunk.js';
import { UiMessageChunkMapper } from './ui-message-chunks.js';
import { LiveStepOrder } from './ui-live-order.js';
import { loadPartialJsonParser } from './ui-output-part.js';
import { openEventStream } from './sse.js';
import { RegenerateRefused, regenerateNamed } from './ui-chat-regenerate.js';
import type { Caller } from './auth.js';

const partSchema = z.looseObject({ type: z.string() });
const chatBody = z.looseObject({
  id: z.string().min(1).max(200),
  messages: z.array(z.looseObject({ id: z.string().min(1).max(200), role: z.enum(['user', 'assistant', 'system']), parts: z.array(partSchema) })).min(1),
  model: modelSchema.optional(),
  /** A typed answer for the turn of the user message this request sends (docs/typed-output.md). */
  output: outputSchema.optional(),
  /** The conversation's budget, when this request's message starts it (docs/budgets.md). */
  budget: z.record(z.string(), z.unknown()).optional(),
});

type BudgetRequested = Extract<TurnEvent, { type: 'budget-requested' }>;

export interface UiChatRouteOptions {
  client: TurnpikeClient;
  /** Whether the caller may read the conversation (`absent`: there is none yet, and a user message creates it). */
  mayRead: (caller: Caller, conversationId: string) => Promise<boolean | 'absent'>;
  notFound: (reply: FastifyReply, conversationId: string) => FastifyReply;
  /** The model of conversations a chat starts (default: the scripted demo). */
  model?: ModelSettings;
  rejected: (reply: FastifyReply, error: TurnpikeRejectedError) => FastifyReply;
  invalid: (reply: FastifyReply, message: string) => FastifyReply;
}

type StreamRecord = { offset: number; event: TurnEvent };

/**
 * The offset after the last of these approvals' requests in the turn's stream, the budget
 * requests among them, and the records before that offset (what earlier responses showed).
 */
async function afterRequests(client: TurnpikeClient, turnId: string, approvalIds: Set<string>): Promise<{ after: number; budgets: BudgetRequested[]; shown: StreamRecord[] }> {
  let after = 0;
  let fromOffset = 0;
  const budgets: BudgetRequested[] = [];
  const read: StreamRecord[] = [];
  for (;;) {
    const page = await client.turn(turnId).query(turnEventsQuery, { fromOffset });
    for (const record of page.events) {
      const { offset, event } = record;
      read.push(record);
      if ((event.type === 'approval-requested' || event.type === 'budget-requested') && approvalIds.has(event.approvalId)) after = offset + 1;
      if (event.type === 'budget-requested' && approvalIds.has(event.approvalId)) budgets.push(event);
    }
    if (page.events.length === 0 || page.nextOffset <= fromOffset) return { after, budgets, shown: read.filter((record) => record.offset < after) };
    fromOffset = page.nextOffset;
  }
}

/** Extends or stops a budget approval as the caller; the decision as the turn records it. */
async function decideBudget(client: TurnpikeClient, turnId: string, budget: BudgetResponse, caller: Caller): Promise<DecisionRecord> {
  const edit = budget.approved && budget.extendBy ? { extendBy: budget.extendBy } : undefined;
  const hash = inputHash(budget.input);
  const result = await client.approveToolCall(turnId, {
    approvalId: budget.approvalId,
    approved: budget.approved,
    ...(edit ? { input: edit } : {}),
    ...(budget.reason !== undefined ? { reason: budget.reason } : {}),
    approver: caller.identity,
    approverGroups: [...caller.groups],
    inputHash: hash,
  });
  return {
    approvalId: budget.approvalId,
    toolCallId: result.toolCallId,
    toolName: 'turnpike_budget',
    outcome: budget.approved ? 'approved' : 'denied',
    approved: budget.approved,
    automatic: false,
    approver: caller.identity,
    ...(budget.reason !== undefined ? { reason: budget.reason } : {}),
    decidedAt: result.decidedAt,
    inputHash: hash,
    ...(edit ? { editedInput: edit } : {}),
  };
}

export function registerUiChatRoute(app: FastifyInstance, options: UiChatRouteOptions): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/chat', { schema: { body: chatBody } }, async (request, reply) => {
    const caller = request.caller!;
    const { id: conversationId, messages } = request.body;
    const last = messages.at(-1)!;
    let turnId: string;
    let fromOffset = 0;
    // A continued message: the records its earlier responses showed, before `fromOffset`.
    let shown: StreamRecord[] = [];
    let messageId: string;
    // Written before the turn's events: the decided states of the budget decisions this request carried.
    const decided: UiMessageChunk[] = [];
    const typed = last.role === 'user' ? request.body.output !== undefined : last.parts.some((part) => part.type === 'data-output');
    // Nothing of a conversation the caller may not read: not its stream, not that it exists.
    const readable = await options.mayRead(caller, conversationId);
    if (readable === false || (readable === 'absent' && last.role !== 'user')) return options.notFound(reply, conversationId);
    // useChat's regenerate() and an edited message (sendMessage with the edited message's id): a new branch (docs/conversations.md).
    const { trigger, messageId: targetId } = request.body as { trigger?: unknown; messageId?: unknown };
    const steering = readable === true && (trigger === 'regenerate-message' || (trigger === 'submit-message' && last.role === 'user' && targetId === last.id));
    try {
      if (steering) {
        const text = last.parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
        if (trigger !== 'regenerate-message' && text.trim() === '') return options.invalid(reply, 'The edited message has no text');
        const sent = trigger === 'regenerate-message' ? await regenerateNamed(options.client, { conversationId, messageId: targetId, messages }) : await options.client.editMessage(conversationId, { messageId: last.id, text });
        turnId = sent.turnWorkflowId;
        messageId = `msg-${sent.branch}`;
      } else if (last.role === 'user') {
        const text = last.parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
        if (text.trim() === '') return options.invalid(reply, 'The last user message has no text');
        const model = (request.body.model as ModelSettings | undefined) ?? options.model ?? { provider: 'scripted', model: 'demo' };
        const { output, budget } = request.body;
        const sent = await options.client.sendMessage({
          conversationId,
          text,
          messageId: last.id,
          conversation: { model, ...(budget ? { budget: budget as TurnBudget } : {}) },
          ...(output ? { output } : {}),
          startedBy: caller.identity,
        });
        turnId = sent.turnWorkflowId;
        messageId = `msg-${last.id}`;
      } else {
        const responses = last.parts.filter(isApprovalResponse) as unknown as ApprovalResponsePart[];
        const budgets = budgetResponses(last.parts);
        if ('invalid' in budgets) return options.invalid(reply, budgets.invalid);
        const state = await options.client.conversationState(conversationId);
        if (!state.currentTurn || responses.length + budgets.length === 0) return options.invalid(reply, 'Nothing to continue: send a user message, or approval responses or budget decisions for the current turn');
        turnId = state.currentTurn.turnWorkflowId;
        const requested = await afterRequests(options.client, turnId, new Set([...responses.map((part) => part.approval.id), ...budgets.map((budget) => budget.approvalId)]));
        const missing = budgets.find((budget) => !requested.budgets.some((event) => event.approvalId === budget.approvalId));
        if (missing) return options.invalid(reply, `The current turn asked for no budget approval ${missing.approvalId}`);
        const pending = new Map((await options.client.turnState(turnId)).pending.map((call) => [call.approvalId, call]));
        for (const part of responses) {
          // Responses decided by an earlier request are sent again by useChat with every message.
          if (!pending.has(part.approval.id)) continue;
          await options.client.approveToolCall(turnId, {
            approvalId: part.approval.id,
            approved: part.approval.approved,
            ...(part.approval.reason !== undefined ? { reason: part.approval.reason } : {}),
            approver: caller.identity,
            approverGroups: [...caller.groups],
            inputHash: inputHash(part.input),
          });
        }
        const records = new Map(((await options.client.turnState(turnId)).decisions ?? []).map((decision) => [decision.approvalId, decision]));
        for (const budget of budgets) {
          if (!pending.has(budget.approvalId)) continue;
          // The decision as made here, should the turn's record of it not be readable yet.
          records.set(budget.approvalId, await decideBudget(options.client, turnId, budget, caller));
        }
        for (const event of requested.budgets) {
          const decision = records.get(event.approvalId);
          if (decision) decided.push(UiMessageChunkMapper.budgetDecided(event, decision));
        }
        fromOffset = requested.after;
        shown = requested.shown;
        messageId = last.id;
      }
    } catch (error) {
      if (error instanceof TurnpikeRejectedError) return options.rejected(reply, error);
      if (error instanceof RegenerateRefused) return options.invalid(reply, error.message);
      throw error;
    }

    const response = openEventStream(reply, { 'x-vercel-ai-ui-message-stream': 'v1' });
    const abort = new AbortController();
    // The response's close, not the request's: Node closes a request once its body is read, which
    // would end the stream at once whenever that comes after this line.
    reply.raw.on('close', () => abort.abort());
    const write = (chunk: UiMessageChunk) => response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    write({ type: 'start', messageId });
    try {
      const mapper = new UiMessageChunkMapper(typed ? { typedOutput: await loadPartialJsonParser() } : {});
      if (last.role === 'user' || steering) mapper.startOutput().forEach(write);
      decided.forEach(write);
      let ended = false;
      // Live: each delta as the model writes it, each unit once (client/live-reader.ts), when the
      // client has a live channel; a new step's deltas wait for the previous step's calls (ui-live-order.ts).
      const order = new LiveStepOrder();
      // Continued: the step the message's last UI step shows goes on in that UI step, and holds a
      // later step's live deltas until its remaining calls are read, as if read from its start.
      let joined: number | undefined;
      for (const record of shown) {
        order.showedBefore(record);
        const step = UiMessageChunkMapper.stepOf(record.event);
        if (step !== undefined) joined = Math.max(step, joined ?? step);
      }
      if (joined !== undefined) mapper.continueStep(joined);
      reading: for await (const record of options.client.turnEvents(turnId, { fromOffset, live: true, signal: abort.signal })) {
        for (const event of order.push(record)) {
          (await mapper.map(event)).forEach(write);
          if (event.type === 'turn-finished') ended = true;
          // A parked call ends this response; the client continues with its decision (or result).
          if (event.type === 'approval-requested' || event.type === 'budget-requested' || event.type === 'client-tool-requested' || ended) break reading;
        }
      }
      if (!ended && !abort.signal.aborted) mapper.end('tool-calls').forEach(write);
    } catch (error) {
      write({ type: 'error', errorText: error instanceof Error ? error.message : String(error) });
    } finally {
      response.write('data: [DONE]\n\n');
      response.end();
    }
  });
}
