/**
 * Server-Sent Events for a turn's and a conversation's event streams, and the stream tokens
 * a browser opens them with (see stream-token.ts).
 *
 *   POST /api/turns/:turnId/stream-token                → { token, expiresAt, url }
 *   GET  /api/turns/:turnId/events?token=…              → text/event-stream, `id:` = offset, or offset and what was shown live (turn-event-id.ts)
 *        …&nested=true                                  → with the child turns' events of agent tool calls, `id:` = nested cursor
 *   POST /api/conversations/:id/stream-token            → { token, expiresAt, url }
 *   GET  /api/conversations/:id/events?token=…          → text/event-stream, `id:` = cursor
 *
 * Each SSE message is `id: <offset or cursor>` and `data: {"offset"…,"event":{…}}` (JSON on one
 * line). A turn's stream, plain or nested, is read live (docs/streaming.md) when the client has a
 * live channel: a record shown ahead of the durable stream has `live` and an id that carries it
 * (turn-event-id.ts; the nested cursor, client/nested-cursor.ts). `Last-Event-ID` (sent by EventSource when it reconnects), or
 * `?lastEventId=`, resumes after that event: every later event arrives exactly once. A turn's stream ends with an
 * `event: end` message after `turn-finished`; a client closes then rather than reconnecting.
 * The events routes accept `Authorization: Bearer` as well, for clients that can send headers,
 * and the dashboard's sign-in cookie (api/session.ts), which EventSource sends same-origin.
 * A stream token is issued, and a bearer caller served, only to one who may read the turn or
 * conversation (api/read-access.ts); anyone else gets 404, as for one that does not exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { parseConversationCursor } from '../client/conversation-events.js';
import { TurnpikeNotFoundError } from '../client/errors.js';
import { MAX_CURSOR_CHARS, NestedCursorError } from '../client/nested-cursor.js';
import { resolveNestedCursor, type NestedTurnEventRecord, type NestedTurnResume } from '../client/nested-turn-events.js';
import type { TurnpikeClient } from '../client/turnpike-client.js';
import type { Authenticator, Caller } from './auth.js';
import type { StreamScope, StreamTokens } from './stream-token.js';
import { openEventStream } from './sse.js';
import { formatTurnEventId, parseTurnEventId, TurnEventIdError, type TurnEventResume } from './turn-event-id.js';

/** A comment line this often keeps proxies from closing an idle stream (a turn parked for hours). */
const KEEP_ALIVE_MS = 15_000;

type Api = FastifyInstance<never, never, never, never, ZodTypeProvider> | FastifyInstance;

export interface EventStreamRouteOptions {
  client: TurnpikeClient;
  authenticate: Authenticator;
  tokens: StreamTokens;
  /** The caller of the request's sign-in cookie, if any, with when the session ends. */
  signedIn?: (request: FastifyRequest) => (Caller & { expiresAt: number }) | undefined;
  /** Whether the caller may read this turn's or conversation's stream. */
  mayRead: (caller: Caller, scope: 'turn' | 'conversation', target: string) => Promise<boolean>;
  /** Writes `{ error: { type, message } }` with the type's status. */
  unauthorized: (reply: FastifyReply) => FastifyReply;
  notFound: (reply: FastifyReply, scope: 'turn' | 'conversation', target: string) => FastifyReply;
  invalid: (reply: FastifyReply, message: string) => FastifyReply;
}

const eventsQuery = z.object({ token: z.string().max(2_000).optional(), lastEventId: z.string().max(100).optional() });
/**
 * `?nested=true`: a turn's stream with the events of its agent tool calls' child turns, nested
 * (client/nested-turn-events.ts); its ids are nested cursors, which may be longer than an offset.
 */
const turnEventsQuery = eventsQuery.extend({ nested: z.enum(['true', 'false']).optional(), lastEventId: z.string().max(MAX_CURSOR_CHARS).optional() });

/**
 * The stream's caller: a bearer token's, if they may read it (`not-found` if not), else the
 * holder of a stream token for exactly this stream (issued only to one who may read it).
 */
async function streamCaller(
  request: FastifyRequest,
  options: EventStreamRouteOptions,
  scope: StreamScope & ('turn' | 'conversation'),
  target: string,
  token: string | undefined,
): Promise<string | 'not-found' | undefined> {
  if (request.headers.authorization) {
    const caller = await options.authenticate(request.headers.authorization);
    if (!caller) return undefined;
    return (await options.mayRead(caller, scope, target)) ? caller.identity : 'not-found';
  }
  if (token) return options.tokens.verify(token, scope, target);
  const signedIn = options.signedIn?.(request);
  if (!signedIn) return undefined;
  return (await options.mayRead(signedIn, scope, target)) ? signedIn.identity : 'not-found';
}

function lastEventId(request: FastifyRequest, fromQuery: string | undefined): string | undefined {
  const header = request.headers['last-event-id'];
  const value = (Array.isArray(header) ? header[0] : header) ?? fromQuery;
  return value === undefined || value === '' ? undefined : value;
}

/** Streams `events` as SSE until they end or the client goes away. */
/** When the stream must stop: the end of the sign-in session it was opened with (a bearer or stream token's reader has none). */
function sessionEnd(request: FastifyRequest, options: EventStreamRouteOptions, token: string | undefined): number | undefined {
  return request.headers.authorization || token ? undefined : options.signedIn?.(request)?.expiresAt;
}

/** Streams `events` as SSE until they end, the client goes away or `endsAt` (epoch ms) passes. */
async function sendEvents(reply: FastifyReply, abort: AbortController, events: AsyncIterable<{ id?: string; data: unknown }>, endMessage: boolean, endsAt?: number): Promise<void> {
  const response = openEventStream(reply);
  response.flushHeaders();
  // The response's close (the client went away, or the stream ended), as in ui-chat-route.ts.
  reply.raw.on('close', () => abort.abort());
  // A signed-in reader hears nothing after the session ends; EventSource then reconnects and gets 401.
  const sessionTimer = endsAt === undefined ? undefined : setTimeout(() => abort.abort(), Math.min(Math.max(endsAt - Date.now(), 0), 2 ** 31 - 1));
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  try {
    // Ask EventSource to come back quickly after a dropped connection.
    response.write('retry: 1000\n\n');
    for await (const { id, data } of events) {
      if (abort.signal.aborted) break;
      response.write(`${id !== undefined ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    }
    if (endMessage && !abort.signal.aborted) response.write('event: end\ndata: {}\n\n');
  } catch (error) {
    if (!abort.signal.aborted) response.write(`event: error\ndata: ${JSON.stringify({ message: error instanceof Error ? error.message : String(error) })}\n\n`);
  } finally {
    clearInterval(keepAlive);
    clearTimeout(sessionTimer);
    response.end();
  }
}

export function registerEventStreamRoutes(app: Api, options: EventStreamRouteOptions): void {
  const typed = app as FastifyInstance & { withTypeProvider: FastifyInstance['withTypeProvider'] };
  const api = typed.withTypeProvider<ZodTypeProvider>();

  api.post('/api/turns/:turnId/stream-token', { schema: { params: z.object({ turnId: z.string().min(1) }) } }, async (request, reply) => {
    const { turnId } = request.params;
    if (!(await options.mayRead(request.caller!, 'turn', turnId))) return options.notFound(reply, 'turn', turnId);
    const issued = await options.tokens.issue({ scope: 'turn', target: turnId, identity: request.caller!.identity });
    return { ...issued, url: `/api/turns/${encodeURIComponent(turnId)}/events?token=${issued.token}` };
  });

  api.post('/api/conversations/:conversationId/stream-token', { schema: { params: z.object({ conversationId: z.string().min(1) }) } }, async (request, reply) => {
    const { conversationId } = request.params;
    if (!(await options.mayRead(request.caller!, 'conversation', conversationId))) return options.notFound(reply, 'conversation', conversationId);
    const issued = await options.tokens.issue({ scope: 'conversation', target: conversationId, identity: request.caller!.identity });
    return { ...issued, url: `/api/conversations/${encodeURIComponent(conversationId)}/events?token=${issued.token}` };
  });

  api.get('/api/turns/:turnId/events', { schema: { params: z.object({ turnId: z.string().min(1) }), querystring: turnEventsQuery } }, async (request, reply) => {
    const { turnId } = request.params;
    const streamReader = await streamCaller(request, options, 'turn', turnId, request.query.token);
    if (streamReader === 'not-found') return options.notFound(reply, 'turn', turnId);
    if (!streamReader) return options.unauthorized(reply);
    const after = lastEventId(request, request.query.lastEventId);
    const abort = new AbortController();
    let records: AsyncIterable<NestedTurnEventRecord>;
    if (request.query.nested === 'true') {
      let resume: NestedTurnResume | undefined;
      try {
        resume = after === undefined ? undefined : await resolveNestedCursor((id, offset) => options.client.turnEventAt(id, offset), turnId, after);
      } catch (error) {
        if (error instanceof NestedCursorError) return options.invalid(reply, error.message);
        if (error instanceof TurnpikeNotFoundError) return options.notFound(reply, 'turn', turnId);
        throw error;
      }
      // Live too: the turn's and each child's deltas as the model writes them; the cursor carries what was shown ahead (client/nested-cursor.ts).
      records = options.client.nestedTurnEvents(turnId, { ...(resume ? { after: resume } : {}), live: true, signal: abort.signal });
    } else {
      let resume: TurnEventResume = { fromOffset: 0 };
      try {
        if (after !== undefined) resume = parseTurnEventId(after);
      } catch (error) {
        if (error instanceof TurnEventIdError) return options.invalid(reply, error.message);
        throw error;
      }
      // Live: deltas as the model writes them, when the client has a live channel (docs/streaming.md); else the durable read.
      records = options.client.turnEvents(turnId, { ...resume, live: true, signal: abort.signal });
    }
    // A nested record's id is its cursor, a plain one's its offset, with what it showed live (turn-event-id.ts); none past their limits: a reconnect resumes after the last id.
    const idOf = (record: NestedTurnEventRecord) => (request.query.nested === 'true' ? record.cursor : formatTurnEventId(record));
    const toMessage = (record: NestedTurnEventRecord) => {
      const id = idOf(record);
      return { ...(id !== undefined ? { id } : {}), data: record };
    };
    await sendEvents(reply, abort, mapRecords(records, toMessage), true, sessionEnd(request, options, request.query.token));
  });

  api.get('/api/conversations/:conversationId/events', { schema: { params: z.object({ conversationId: z.string().min(1) }), querystring: eventsQuery } }, async (request, reply) => {
    const { conversationId } = request.params;
    const streamReader = await streamCaller(request, options, 'conversation', conversationId, request.query.token);
    if (streamReader === 'not-found') return options.notFound(reply, 'conversation', conversationId);
    if (!streamReader) return options.unauthorized(reply);
    const after = lastEventId(request, request.query.lastEventId);
    if (after !== undefined) {
      try {
        parseConversationCursor(after);
      } catch (error) {
        return options.invalid(reply, (error as Error).message);
      }
    }
    const abort = new AbortController();
    const events = options.client.conversationEvents(conversationId, { ...(after !== undefined ? { after } : {}), signal: abort.signal });
    await sendEvents(reply, abort, mapRecords(events, (event) => ({ id: event.cursor, data: event })), false, sessionEnd(request, options, request.query.token));
  });
}

async function* mapRecords<T, U>(source: AsyncIterable<T>, map: (item: T) => U): AsyncGenerator<U> {
  for await (const item of source) yield map(item);
}
