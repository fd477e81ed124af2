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
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TurnpikeRejectedError, type TurnpikeClient } from '../client/turnpike-client.js';
import { turnEventsQuery } from '../workflows/definitions.js';
import { inputHash } from '../workflows/input-hash.js';
import type { ModelSettings } from '../workflows/types.js';
import { UiMessageChunkMapper, type UiMessageChunk } from './ui-message-chunks.js';
import { openEventStream } from './sse.js';
import type { Caller } from './auth.js';

const partSchema = z.looseObject({ type: z.string() });
const chatBody = z.looseObject({
  id: z.string().min(1).max(200),
  messages: z.array(z.looseObject({ id: z.string().min(1).max(200), role: z.enum(['user', 'assistant', 'system']), parts: z.array(partSchema) })).min(1),
  model: z.looseObject({ provider: z.enum(['openai', 'anthropic', 'scripted']), model: z.string().min(1) }).optional(),
});

interface ApprovalResponsePart {
  type: string;
  toolCallId: string;
  state: 'approval-responded';
  input: unknown;
  approval: { id: string; approved: boolean; reason?: string };
}

function isApprovalResponse(part: { type: string }): part is ApprovalResponsePart {
  const candidate = part as Partial<ApprovalResponsePart>;
  return (part.type.startsWith('tool-') || part.type === 'dynamic-tool') && candidate.state === 'approval-responded' && typeof candidate.approval?.id === 'string' && typeof candidate.approval.approved === 'boolean';
}

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

/** The offset after the last of these approvals' requests in the turn's stream. */
async function offsetAfterApprovals(client: TurnpikeClient, turnId: string, approvalIds: Set<string>): Promise<number> {
  let after = 0;
  let fromOffset = 0;
  for (;;) {
    const page = await client.turn(turnId).query(turnEventsQuery, { fromOffset });
    for (const { offset, event } of page.events) {
      if (event.type === 'approval-requested' && approvalIds.has(event.approvalId)) after = offset + 1;
    }
    if (page.events.length === 0 || page.nextOffset <= fromOffset) return after;
    fromOffset = page.nextOffset;
  }
}

export function registerUiChatRoute(app: FastifyInstance, options: UiChatRouteOptions): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/chat', { schema: { body: chatBody } }, async (request, reply) => {
    const caller = request.caller!;
    const { id: conversationId, messages } = request.body;
    const last = messages.at(-1)!;
    let turnId: string;
    let fromOffset = 0;
    let messageId: string;
    // Nothing of a conversation the caller may not read: not its stream, not that it exists.
    const readable = await options.mayRead(caller, conversationId);
    if (readable === false || (readable === 'absent' && last.role !== 'user')) return options.notFound(reply, conversationId);
    try {
      if (last.role === 'user') {
        const text = last.parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
        if (text.trim() === '') return options.invalid(reply, 'The last user message has no text');
        const model = (request.body.model as ModelSettings | undefined) ?? options.model ?? { provider: 'scripted', model: 'demo' };
        const sent = await options.client.sendMessage({ conversationId, text, messageId: last.id, conversation: { model }, startedBy: caller.identity });
        turnId = sent.turnWorkflowId;
        messageId = `msg-${last.id}`;
      } else {
        const responses = last.parts.filter(isApprovalResponse) as unknown as ApprovalResponsePart[];
        const state = await options.client.conversationState(conversationId);
        if (!state.currentTurn || responses.length === 0) return options.invalid(reply, 'Nothing to continue: send a user message or approval responses for the current turn');
        turnId = state.currentTurn.turnWorkflowId;
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
        fromOffset = await offsetAfterApprovals(options.client, turnId, new Set(responses.map((part) => part.approval.id)));
        messageId = last.id;
      }
    } catch (error) {
      if (error instanceof TurnpikeRejectedError) return options.rejected(reply, error);
      throw error;
    }

    const response = openEventStream(reply, { 'x-vercel-ai-ui-message-stream': 'v1' });
    const abort = new AbortController();
    request.raw.on('close', () => abort.abort());
    const write = (chunk: UiMessageChunk) => response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    const mapper = new UiMessageChunkMapper();
    write({ type: 'start', messageId });
    try {
      let ended = false;
      for await (const { event } of options.client.turnEvents(turnId, { fromOffset, signal: abort.signal })) {
        mapper.map(event).forEach(write);
        if (event.type === 'turn-finished') ended = true;
        // A parked call ends this response; the client continues with its decision (or result).
        if (event.type === 'approval-requested' || event.type === 'budget-requested' || event.type === 'client-tool-requested' || ended) break;
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
