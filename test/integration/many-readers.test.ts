/**
 * Watching never blocks deciding. Readers of a turn's stream read it by query, shared per
 * process (client/stream-hub.ts): no number of them, open, abandoned or killed, can keep a
 * decision from being admitted. The stream's long-poll update, kept for clients of
 * `@temporalio/workflow-streams`, is held to 4 waiting polls and 30 s each, so even those
 * clients leave the decisions their update slots (Temporal's default: 10 in flight per workflow).
 *
 * All at Temporal's default limits. That readers take no update slot is read from each history:
 * the updates it accepted are the decisions and messages, nothing else. The latencies are printed
 * here and measured in `npm run bench`, not asserted.
 */
import { execFile } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { connect as connectSocket } from 'node:net';
import { promisify } from 'node:util';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { StreamHub } from '../../client/stream-hub.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { turnEventsQuery } from '../../workflows/messages/definitions.js';
import { streamPollUpdate } from '../../workflows/stream/stream-guard.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const run = promisify(execFile);
const SSE_READERS_PER_API = 50;
const CLIENT_READERS = 20;
const AUTH = { authorization: 'Bearer alice-token' };

let harness: TurnpikeHarness;
/** Two API servers, each with its own Temporal connection and client, as two API processes have. */
const apis: Array<{ server: FastifyInstance; base: string; connection: Connection }> = [];

beforeAll(async () => {
  harness = await startTurnpike({ tools: testTools });
  for (let index = 0; index < 2; index++) {
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new TurnpikeClient({
      client: new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter }),
      taskQueue: harness.taskQueue,
    });
    const server = await buildApi({ client, tokens: parseTokenMap('alice-token:alice') });
    apis.push({ server, base: await server.listen({ host: '127.0.0.1', port: 0 }), connection });
  }
});
afterAll(async () => {
  for (const { server, connection } of apis) {
    await server.close();
    await connection.close();
  }
  await harness?.stop();
});

/** Three approvals, one after another. */
function threeParks() {
  return harness.startTurn({
    startedBy: 'alice',
    text: ['alpha', 'bravo', 'charlie'].map((target, index) => use('guarded_action', { target, count: index + 1 })).join(' then '),
  });
}

/** The turn's next parked call, once the one decided (`previous`) has moved on. */
async function nextPending(handle: Awaited<ReturnType<typeof threeParks>>, previous: string) {
  return (await waitForState(handle, (state) => state.pending.length === 1 && state.pending[0]!.approvalId !== previous)).pending;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

/** The names of the updates a workflow's history accepted, in order: every one of them took a slot. */
async function acceptedUpdates(workflowId: string): Promise<string[]> {
  const history = await harness.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const name = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    return name ? [name] : [];
  });
}

const eventOf = (message: SseMessage) => (JSON.parse(message.data) as { event: TurnEvent }).event;

describe('readers of a parked turn', () => {
  it(`${2 * SSE_READERS_PER_API} SSE readers across 2 API servers and ${CLIENT_READERS} turnEvents readers: approvals by the HTTP API, TurnpikeClient and the Temporal CLI each go through, and every reader sees turn-finished`, { timeout: 300_000 }, async () => {
    const handle = await threeParks();
    const turnPath = `/api/turns/${encodeURIComponent(handle.workflowId)}`;
    const sse = apis.flatMap(({ base }) =>
      Array.from({ length: SSE_READERS_PER_API }, () => readSseFrom(`${base}${turnPath}/events`, AUTH, (message) => message.event === 'end')),
    );
    const readerClient = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
    const direct = Array.from({ length: CLIENT_READERS }, async () => {
      const events: Array<{ offset: number; event: TurnEvent }> = [];
      for await (const record of readerClient.turnEvents(handle.workflowId)) events.push(record);
      return events;
    });

    const latencies: Record<string, number> = {};
    // 1. By the HTTP API, while every reader follows the parked turn.
    let [pending] = await waitForPending(handle);
    const byApi = await timed(() =>
      fetch(`${apis[0]!.base}${turnPath}/approvals/${pending!.approvalId}`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true }),
      }),
    );
    expect(byApi.value.status).toBe(200);
    latencies.httpApi = byApi.ms;
    // 2. By TurnpikeClient.
    [pending] = await nextPending(handle, pending!.approvalId!);
    const byClient = await timed(() => readerClient.approveToolCall(handle.workflowId, { approvalId: pending!.approvalId!, approved: true, approver: 'bob' }));
    expect(byClient.value).toMatchObject({ approvalId: pending!.approvalId, approved: true });
    latencies.turnpikeClient = byClient.ms;
    // 3. By the Temporal CLI's update, as an operator sends it.
    [pending] = await nextPending(handle, pending!.approvalId!);
    const byCli = await timed(() =>
      run(inject('temporalCli'), [
        'workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'approveToolCall',
        '--input', JSON.stringify({ approvalId: pending!.approvalId, approved: true, approver: 'alice' }),
        '--address', inject('temporalAddress'),
      ]),
    );
    expect(byCli.value.stdout).toContain(pending!.toolCallId);
    latencies.temporalCli = byCli.ms;
    console.log(`decision latency with ${2 * SSE_READERS_PER_API + CLIENT_READERS} readers (ms): ${JSON.stringify(latencies)}`);

    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved', 'approved', 'approved']);
    // The 120 readers took no update slot: the turn accepted its 3 decisions and nothing else.
    expect(await acceptedUpdates(handle.workflowId)).toEqual(['approveToolCall', 'approveToolCall', 'approveToolCall']);
    const eventCount = (await handle.query(turnEventsQuery)).nextOffset;
    for (const reader of await Promise.all(sse)) {
      expect(reader.status).toBe(200);
      const messages = reader.messages.filter((message) => message.event === 'message');
      expect(messages.map((message) => Number(message.id))).toEqual(Array.from({ length: eventCount }, (_, offset) => offset));
      expect(eventOf(messages.at(-1)!)).toMatchObject({ type: 'turn-finished', status: 'completed' });
    }
    for (const events of await Promise.all(direct)) {
      expect(events.map(({ offset }) => offset)).toEqual(Array.from({ length: eventCount }, (_, offset) => offset));
      expect(events.at(-1)!.event.type).toBe('turn-finished');
    }
  });

  it('survives 1,000 reader connections opened and dropped, a third of them killed without a close, and is decided by update after them', { timeout: 300_000 }, async () => {
    const handle = await threeParks();
    const [pending] = await waitForPending(handle);
    const { base } = apis[1]!;
    const url = new URL(`${base}/api/turns/${encodeURIComponent(handle.workflowId)}/events`);
    let opened = 0;
    const cycle = async (index: number) => {
      if (index % 3 === 2) {
        // A client that vanishes: the socket is reset once the stream's headers arrive.
        await new Promise<void>((resolve, reject) => {
          const socket = connectSocket(Number(url.port), url.hostname, () => {
            socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${AUTH.authorization}\r\nAccept: text/event-stream\r\n\r\n`);
          });
          socket.once('data', (chunk) => {
            if (chunk.toString().startsWith('HTTP/1.1 200')) opened++;
            socket.resetAndDestroy();
            resolve();
          });
          socket.once('error', reject);
        });
        return;
      }
      const abort = new AbortController();
      const response = await fetch(url, { headers: AUTH, signal: abort.signal });
      if (response.status === 200) opened++;
      const reader = response.body!.getReader();
      await reader.read();
      abort.abort();
      await reader.cancel().catch(() => undefined);
    };
    for (let batch = 0; batch < 20; batch++) await Promise.all(Array.from({ length: 50 }, (_, index) => cycle(batch * 50 + index)));
    expect(opened).toBe(1_000);

    const decided = await timed(() => harness.client.workflow.getHandle(handle.workflowId).executeUpdate('approveToolCall', { args: [{ approvalId: pending!.approvalId, approved: true, approver: 'alice' }] }));
    console.log(`decision after 1,000 reader cycles: ${decided.ms} ms`);
    expect(decided.value).toMatchObject({ approvalId: pending!.approvalId, approved: true });
    expect(await acceptedUpdates(handle.workflowId)).toEqual(['approveToolCall']);
    await harness.client.workflow.getHandle(handle.workflowId).cancel();
  });
});

describe('readers of a conversation', () => {
  it('50 SSE readers across 2 API servers: a message is taken and its turn decided, and every reader sees the turn finish', { timeout: 180_000 }, async () => {
    const conversationId = `conv-many-readers-${Date.now()}`;
    const path = `/api/conversations/${conversationId}`;
    const send = (text: string) =>
      fetch(`${apis[0]!.base}${path}/messages`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
    const first = await send(use('record_action', { action: 'before the readers' }));
    expect(first.status).toBe(202);
    await harness.client.workflow.getHandle(((await first.json()) as { turnWorkflowId: string }).turnWorkflowId).result();

    const secondTurn = `${conversationId}/turn-2`;
    const finishedSecond = (message: SseMessage) => message.event === 'message' && (JSON.parse(message.data) as { turnId: string; event: TurnEvent }).turnId === secondTurn && eventOf(message).type === 'turn-finished';
    const readers = apis.flatMap(({ base }) => Array.from({ length: 25 }, () => readSseFrom(`${base}${path}/events`, AUTH, finishedSecond)));
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const sent = await timed(() => send(use('guarded_action', { target: 'delta', count: 4 })));
    expect(sent.value.status).toBe(202);
    expect(((await sent.value.json()) as { turnWorkflowId: string }).turnWorkflowId).toBe(secondTurn);
    const turn = harness.client.workflow.getHandle(secondTurn);
    const [pending] = await waitForPending(turn);
    const approved = await timed(() =>
      fetch(`${apis[1]!.base}/api/turns/${encodeURIComponent(secondTurn)}/approvals/${pending!.approvalId}`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true }),
      }),
    );
    expect(approved.value.status).toBe(200);
    console.log(`with 50 conversation readers (ms): sendMessage ${sent.ms}, approval ${approved.ms}`);
    for (const { status, messages } of await Promise.all(readers)) {
      expect(status).toBe(200);
      expect(finishedSecond(messages.at(-1)!)).toBe(true);
      // Both turns, each started, finished and ended in the conversation's order.
      const types: string[] = messages.filter((message) => message.event === 'message').map((message) => eventOf(message).type);
      expect(types.filter((type) => type === 'turn-started')).toHaveLength(2);
      expect(types.filter((type) => type === 'turn-finished')).toHaveLength(2);
    }
    // The 50 readers took no update slot of the conversation's, nor of the turn's.
    expect(await acceptedUpdates(conversationId)).toEqual(['sendMessage', 'sendMessage']);
    expect(await acceptedUpdates(secondTurn)).toEqual(['approveToolCall']);
  });
});

describe('the shared feed of a process', () => {
  it('reads a stream once for all its readers, and stops reading 5 s after the last reader leaves', { timeout: 60_000 }, async () => {
    const handle = await threeParks();
    await waitForPending(handle);
    const hub = new StreamHub(harness.client);
    const abort = new AbortController();
    // One signal for the 30 readers, each waiting on it with a listener of its own.
    setMaxListeners(30, abort.signal);
    const readers = Array.from({ length: 30 }, async () => {
      let seen = 0;
      for await (const _ of hub.read(handle.workflowId, turnEventsQuery, { signal: abort.signal })) seen++;
      return seen;
    });
    while (hub.size === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(hub.size).toBe(1);
    abort.abort();
    const seen = await Promise.all(readers);
    const published = (await handle.query(turnEventsQuery)).nextOffset;
    expect(seen.every((count) => count === published)).toBe(true);
    expect(hub.size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(hub.size).toBe(0);
    await harness.client.workflow.getHandle(handle.workflowId).cancel();
  });
});

describe("the stream's long-poll update, for clients of @temporalio/workflow-streams", () => {
  it('lets 4 polls wait and refuses the rest (TooManyPolls): a decision is still admitted, and a waiting poll answers empty after 30 s', { timeout: 120_000 }, async () => {
    const handle = await threeParks();
    const [pending] = await waitForPending(handle);
    const end = (await handle.query(turnEventsQuery)).nextOffset;
    let refusals = 0;
    const polls = Array.from({ length: 12 }, () =>
      timed(() => handle.executeUpdate(streamPollUpdate, { args: [{ topics: [], from_offset: end }] }).then(
        (result) => ({ result }),
        (error: unknown) => {
          refusals++;
          return { refused: error instanceof WorkflowUpdateFailedError ? (error.cause as { type?: string }).type : String(error) };
        },
      )),
    );
    // The refusals come at once, and a refusal means 4 polls were waiting then: they hold their
    // slots, so once 8 are refused the decision comes while 4 wait (not after a fixed pause, which
    // a loaded machine can outrun).
    const deadline = Date.now() + 60_000;
    while (refusals < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const decided = await timed(() => harness.client.workflow.getHandle(handle.workflowId).executeUpdate('approveToolCall', { args: [{ approvalId: pending!.approvalId, approved: true, approver: 'alice' }] }));
    expect(decided.value).toMatchObject({ approvalId: pending!.approvalId, approved: true });
    const answers = await Promise.all(polls);
    const refused = answers.filter(({ value }) => 'refused' in value);
    expect(refused.map(({ value }) => (value as { refused: string }).refused)).toEqual(Array(8).fill('TooManyPolls'));
    // The approval published events, so the 4 waiting polls answered with them.
    const answered = answers.filter(({ value }) => 'result' in value).map(({ value }) => (value as { result: { items: unknown[]; next_offset: number } }).result);
    expect(answered).toHaveLength(4);
    expect(answered.every((result) => result.items.length > 0)).toBe(true);

    // On the next park, nothing is published: a poll waits 30 s and answers with no items.
    await nextPending(handle, pending!.approvalId!);
    const quiet = (await handle.query(turnEventsQuery)).nextOffset;
    const idle = await timed(() => handle.executeUpdate(streamPollUpdate, { args: [{ topics: [], from_offset: quiet }] }));
    expect(idle.value).toEqual({ items: [], next_offset: quiet, more_ready: false });
    expect(idle.ms).toBeGreaterThanOrEqual(29_000);
    await handle.cancel();
  });
});
