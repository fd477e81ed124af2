/**
 * The HTTP API's Server-Sent Events on a real dev server, over a real socket: stream tokens
 * (EventSource sends no headers), `Last-Event-ID` resume, and 401 for every token that does
 * not fit the stream; the approvals listing feed.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamTokens, STREAM_TOKEN_TTL_SECONDS } from '../../api/stream-token.js';
import type { StreamHub } from '../../client/stream-hub.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { testTools, use } from '../support/test-tools.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { serveApi } from '../support/api-server.js';

const SECRET = 'a-stream-secret-of-at-least-32-characters';
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;
let base: string;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  ({ client, api, base } = await serveApi(turnpike, { streamSecret: SECRET }));
});
afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
});

/** Reads SSE messages from the API until `until` holds for one (inclusive), then disconnects. */
function readSse(url: string, headers: Record<string, string>, until: (message: SseMessage) => boolean) {
  return readSseFrom(`${base}${url}`, headers, until);
}

const isType = (type: TurnEvent['type']) => (message: SseMessage) => message.event === 'message' && (JSON.parse(message.data) as { event: TurnEvent }).event.type === type;

async function streamToken(path: string): Promise<{ token: string; url: string; expiresAt: string }> {
  const response = await fetch(`${base}${path}/stream-token`, { method: 'POST', headers: { authorization: 'Bearer alice-token' } });
  expect(response.status).toBe(200);
  return (await response.json()) as { token: string; url: string; expiresAt: string };
}

describe('turn events over SSE', () => {
  it('streams a parked turn with a stream token and resumes after Last-Event-ID exactly once', async () => {
    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('guarded_action', { target: 'sse', count: 3 }) });
    const turnPath = `/api/turns/${encodeURIComponent(handle.workflowId)}`;
    const issued = await streamToken(turnPath);
    expect(Date.parse(issued.expiresAt) - Date.now()).toBeLessThanOrEqual(STREAM_TOKEN_TTL_SECONDS * 1000);
    const first = await readSse(issued.url, {}, isType('approval-requested'));
    expect(first.status).toBe(200);
    expect(first.messages.map((message) => message.id)).toEqual(first.messages.map((_, index) => String(index)));
    const [pending] = await waitForPending(handle);
    expect(JSON.parse(first.messages.at(-1)!.data).event).toMatchObject({ approvalId: pending.approvalId, inputHash: pending.inputHash });

    const decided = await fetch(`${base}${turnPath}/approvals/${pending.approvalId}`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true }),
    });
    expect(decided.status).toBe(200);
    // EventSource reconnects to the same URL with Last-Event-ID.
    const rest = await readSse(issued.url, { 'last-event-id': first.messages.at(-1)!.id! }, (message) => message.event === 'end');
    const events = rest.messages.filter((message) => message.event === 'message');
    expect(events.map((message) => Number(message.id))).toEqual(events.map((_, index) => first.messages.length + index));
    expect(rest.messages.at(-1)!.event).toBe('end');
    const result = await handle.result();
    const text = events.map((message) => JSON.parse(message.data).event as TurnEvent).map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
    expect(text).toBe(result.text);
    expect(JSON.parse(events.at(-1)!.data).event).toMatchObject({ type: 'turn-finished', status: 'completed' });
  });

  it('lets go of the stream once its reader goes away: the API process stops reading the parked turn', async () => {
    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('guarded_action', { target: 'gone', count: 1 }) });
    await waitForPending(handle);
    // The feeds the API's client keeps open, one per stream read (client/stream-hub.ts).
    const feeds = () => (client as unknown as { streams: StreamHub }).streams.size;
    const abort = new AbortController();
    const response = await fetch(`${base}/api/turns/${encodeURIComponent(handle.workflowId)}/events`, { headers: { authorization: 'Bearer alice-token' }, signal: abort.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    expect(feeds()).toBe(1);
    abort.abort();
    await reader.cancel().catch(() => undefined);
    // The feed lingers 5 s for a reader that comes back, then closes.
    const deadline = Date.now() + 30_000;
    while (feeds() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(feeds()).toBe(0);
    await handle.cancel();
  });

  it('refuses a missing, forged, expired or other stream\'s token with 401, and takes a bearer token', async () => {
    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('record_action', { action: 'sse-auth' }) });
    const turnPath = `/api/turns/${encodeURIComponent(handle.workflowId)}`;
    const otherTurn = await turnpike.startTurn({ startedBy: 'alice', text: use('record_action', { action: 'sse-other' }) });
    const other = await streamToken(`/api/turns/${encodeURIComponent(otherTurn.workflowId)}`);
    // No token for a turn that does not exist: the same 404 as for one the caller may not read.
    expect((await fetch(`${base}/api/turns/${encodeURIComponent(`turn-${randomUUID()}`)}/stream-token`, { method: 'POST', headers: { authorization: 'Bearer alice-token' } })).status).toBe(404);
    const forged = await new StreamTokens('another-secret-that-is-32-characters-long').issue({ scope: 'turn', target: handle.workflowId, identity: 'alice' });
    const expired = await new StreamTokens(SECRET).issue({ scope: 'turn', target: handle.workflowId, identity: 'alice' }, Date.now() - (STREAM_TOKEN_TTL_SECONDS + 60) * 1000);
    const conversationScoped = await new StreamTokens(SECRET).issue({ scope: 'conversation', target: handle.workflowId, identity: 'alice' });
    for (const token of [undefined, 'not-a-jwt', other.token, forged.token, expired.token, conversationScoped.token]) {
      const response = await fetch(`${base}${turnPath}/events${token ? `?token=${token}` : ''}`);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe('Unauthorized');
    }
    expect((await fetch(`${base}${turnPath}/events`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${base}${turnPath}/stream-token`, { method: 'POST' })).status).toBe(401);
    const withBearer = await readSse(`${turnPath}/events`, { authorization: 'Bearer alice-token' }, (message) => message.event === 'end');
    expect(withBearer.status).toBe(200);
    expect(JSON.parse(withBearer.messages.at(-2)!.data).event.type).toBe('turn-finished');
    expect((await fetch(`${base}${turnPath}/events`, { headers: { authorization: 'Bearer alice-token', 'last-event-id': 'x1' } })).status).toBe(400);
  });
});

describe('conversation events over SSE', () => {
  it('streams a conversation with its cursor ids and resumes after Last-Event-ID', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const sent = await fetch(`${base}/api/conversations/${conversationId}/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ text: use('record_action', { action: 'sse-conversation' }) }),
    });
    expect(sent.status).toBe(202);
    const issued = await streamToken(`/api/conversations/${conversationId}`);
    const all = await readSse(issued.url, {}, isType('turn-finished'));
    expect(all.messages[0].id).toBe('0');
    expect(JSON.parse(all.messages[0].data).event.type).toBe('turn-started');
    const cut = 2;
    const rest = await readSse(issued.url, { 'last-event-id': all.messages[cut].id! }, isType('turn-finished'));
    expect([...all.messages.slice(0, cut + 1), ...rest.messages]).toEqual(all.messages);
  });
});

describe('the approvals listing over SSE', () => {
  it('sends the caller\'s listing when it opens and again when a call parks or is decided, on one connection', async () => {
    const issued = await streamToken('/api/approvals');
    expect(issued.url).toMatch(/^\/api\/approvals\/events\?token=/);
    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('guarded_action', { target: 'sse-listing', count: 2 }) });
    const [pending] = await waitForPending(handle);
    const listed = (message: SseMessage) => (JSON.parse(message.data) as { calls: Array<{ approvalId?: string }> }).calls.some((call) => call.approvalId === pending.approvalId);
    let decided = false;
    const { status, messages } = await readSse(issued.url, {}, (message) => {
      if (message.event !== 'message') return false;
      if (listed(message) && !decided) {
        decided = true;
        // Decided through the API while the stream is open: the feed lists again at once.
        void fetch(`${base}/api/turns/${encodeURIComponent(handle.workflowId)}/approvals/${pending.approvalId}`, {
          method: 'POST',
          headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
          body: JSON.stringify({ approved: true }),
        });
        return false;
      }
      return decided && !listed(message);
    });
    expect(status).toBe(200);
    const bodies = messages.map((message) => JSON.parse(message.data) as { approver: string; counts: Record<string, number> });
    expect(bodies.every((body) => body.approver === 'alice')).toBe(true);
    // Only changes are sent: no two messages in a row are the same listing.
    expect(messages.every((message, index) => index === 0 || message.data !== messages[index - 1].data)).toBe(true);
    expect(messages.some(listed)).toBe(true);
    expect(listed(messages.at(-1)!)).toBe(false);
    expect((await handle.result()).toolCalls[0].approval?.approver).toBe('alice');
  });

  it('refuses a missing, forged, expired or other stream\'s token with 401', async () => {
    const forged = await new StreamTokens('another-secret-that-is-32-characters-long').issue({ scope: 'approvals', target: 'approvals', identity: 'alice' });
    const expired = await new StreamTokens(SECRET).issue({ scope: 'approvals', target: 'approvals', identity: 'alice' }, Date.now() - (STREAM_TOKEN_TTL_SECONDS + 60) * 1000);
    const turnScoped = await new StreamTokens(SECRET).issue({ scope: 'turn', target: 'approvals', identity: 'alice' });
    for (const token of [undefined, 'not-a-jwt', forged.token, expired.token, turnScoped.token]) {
      const response = await fetch(`${base}/api/approvals/events${token ? `?token=${token}` : ''}`);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe('Unauthorized');
    }
    expect((await fetch(`${base}/api/approvals/events`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${base}/api/approvals/stream-token`, { method: 'POST' })).status).toBe(401);
    const withBearer = await readSse('/api/approvals/events', { authorization: 'Bearer alice-token' }, () => true);
    expect(withBearer.status).toBe(200);
    expect(JSON.parse(withBearer.messages[0].data)).toMatchObject({ approver: 'alice', calls: expect.any(Array) });
  });
});
