/**
 * The live channel through the HTTP API (docs/streaming.md, "The live channel"): the turn events
 * SSE route and `/api/chat` read live, over a real socket, from an API whose TurnpikeClient holds
 * the worker's channel; an OpenAI turn through the real SDK against the strict fake, streaming at
 * a model's pace. Text reaches the reader while every durable read of the API's client is held; a
 * reader that drops at a live record resumes from its `Last-Event-ID` with every event once, in
 * order; a browser's chat gets the model's text exactly once; a hostile `Last-Event-ID` gets 400.
 */
import { randomUUID } from 'node:crypto';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InProcessLiveDeltas } from '../../activities/live-deltas.js';
import type { StreamHub } from '../../client/stream-hub.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import { nonDeltaCount, shown, words } from '../support/live-view.js';
import { serveApi } from '../support/api-server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { testTools } from '../support/test-tools.js';
import { queryGate } from '../support/query-gate.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const AUTH = { authorization: 'Bearer alice-token' };
const MODEL = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 } as const;

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
const channel = new InProcessLiveDeltas();
const apis: FastifyInstance[] = [];

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools, liveDeltas: channel });
});
afterAll(async () => {
  for (const api of apis) await api.close();
  await turnpike?.stop();
  await fake?.restore();
});
beforeEach(() => fake.reset());

/** The HTTP API over a TurnpikeClient holding the worker's live channel (on `temporal`, the harness's client by default). */
async function serveLive(temporal: Client = turnpike.client): Promise<{ base: string; client: TurnpikeClient }> {
  const client = new TurnpikeClient({ client: temporal, taskQueue: turnpike.taskQueue, liveDeltas: channel });
  const served = await serveApi(turnpike, { client });
  apis.push(served.api);
  return { base: served.base, client };
}

const FIRST = words(30, 'a');
const SECOND = words(60, 'b');

/** A two-step turn alice may read: text and a tool call, then text; tokens 10 ms apart. */
async function startTwoStepTurn() {
  fake.script('openai', [
    { text: FIRST, toolCalls: [{ name: 'record_action', input: { action: 'live-sse' } }], stream: { eventIntervalMs: 10 } },
    { text: SECOND, stream: { eventIntervalMs: 10 } },
  ]);
  return turnpike.startTurn({ model: MODEL, text: 'Go.', startedBy: 'alice' });
}


/** Every event of the finished turn, read the durable way. */
async function durableRead(turnId: string): Promise<TurnEventRecord[]> {
  const records: TurnEventRecord[] = [];
  for await (const record of new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turnEvents(turnId)) records.push(record);
  return records;
}

const recordOf = (message: SseMessage) => JSON.parse(message.data) as TurnEventRecord;
const eventsPath = (turnId: string) => `/api/turns/${encodeURIComponent(turnId)}/events`;

describe('the turn events SSE route, live', () => {
  it("sends a turn's text while every durable read of the API is held, then confirms it without repeating it", async () => {
    const gate = queryGate(turnpike.client);
    const { base } = await serveLive(gate.client);
    const handle = await startTwoStepTurn();
    const texts: Record<number, string> = {};
    let openedByReader = false;
    let durableBeforeOpen = -1;
    const records: TurnEventRecord[] = [];
    const reading = readSseFrom(`${base}${eventsPath(handle.workflowId)}`, AUTH, (message) => {
      if (message.event !== 'message') return message.event === 'end';
      const record = recordOf(message);
      records.push(record);
      if (record.event.type === 'text-delta') texts[record.event.step] = (texts[record.event.step] ?? '') + record.event.text;
      if (gate.closed && texts[1] === FIRST && texts[2] === SECOND) {
        openedByReader = true;
        durableBeforeOpen = nonDeltaCount(records);
        gate.open();
      }
      return false;
    });
    await handle.result();
    gate.open();
    const { status, messages } = await reading;
    expect(status).toBe(200);
    expect(messages.at(-1)!.event).toBe('end');
    // Both steps' whole text reached the browser before any durable read answered.
    expect(openedByReader).toBe(true);
    expect(durableBeforeOpen).toBe(0);
    expect(shown(records)).toEqual(shown(await durableRead(handle.workflowId)));
    // A live record's id carries what it showed ahead; the others keep their plain offset.
    for (const message of messages.filter((each) => each.event === 'message')) {
      const record = recordOf(message);
      if (record.live === undefined) expect(message.id).toBe(String(record.offset));
      else expect(message.id).toMatch(new RegExp(`^${record.offset}(\\.\\d+-\\d+-\\d+)+$`));
    }
  });

  it('resumes a reader that drops at a live record from its Last-Event-ID, header or query, with every event once, in order', async () => {
    const { base } = await serveLive();
    const handle = await startTwoStepTurn();
    const url = `${base}${eventsPath(handle.workflowId)}`;
    let live = 0;
    const first = await readSseFrom(url, AUTH, (message) => {
      if (message.event !== 'message') return message.event === 'end';
      const record = recordOf(message);
      return record.live !== undefined && record.event.type === 'text-delta' && record.event.step === 2 && ++live === 3;
    });
    const cut = first.messages.at(-1)!;
    expect(cut.id).toContain('.');
    live = 0;
    const second = await readSseFrom(url, { ...AUTH, 'last-event-id': cut.id! }, (message) => message.event === 'end' || (message.event === 'message' && recordOf(message).live !== undefined && ++live === 2));
    expect(second.status).toBe(200);
    const resumeAt = second.messages.filter((message) => message.id !== undefined).at(-1) ?? cut;
    const third = await readSseFrom(`${url}?lastEventId=${encodeURIComponent(resumeAt.id!)}`, AUTH, (message) => message.event === 'end');
    expect(third.status).toBe(200);
    expect(third.messages.at(-1)!.event).toBe('end');
    expect(await handle.result()).toMatchObject({ status: 'completed', text: SECOND });

    const durable = shown(await durableRead(handle.workflowId));
    expect(durable.texts).toEqual({ 1: FIRST, 2: SECOND });
    const all = [...first.messages, ...second.messages, ...third.messages].filter((message) => message.event === 'message').map(recordOf);
    expect(shown(all)).toEqual(durable);
    expect(all.some((record) => record.live !== undefined)).toBe(true);
  });

  it('refuses a hostile Last-Event-ID with 400 and a reason, opens no read for it, and takes a well-formed live one', async () => {
    const { base, client } = await serveLive();
    const handle = await startTwoStepTurn();
    await handle.result();
    const url = `${base}${eventsPath(handle.workflowId)}`;
    const feeds = () => (client as unknown as { streams: StreamHub }).streams.size;
    const hostile = [
      'x1',
      '-1',
      '3.',
      '3.eyJzdGVwIjoyLCJhdHRlbXB0IjoxLCJ1bml0cyI6NX0',
      '3.{"step":2}',
      '3.2-1',
      '3.2-0-5',
      '3.2-1-0',
      '3.2-1-5.2-1-6',
      '3.2-1-99999999999999999999',
      '99999999999999999999.2-1-5',
      `3${'.2-1-5'.repeat(17)}`,
      `3.2-1-5${'0'.repeat(300)}`,
    ];
    for (const id of hostile) {
      for (const request of [{ url, headers: { ...AUTH, 'last-event-id': id } }, { url: `${url}?lastEventId=${encodeURIComponent(id)}`, headers: AUTH }]) {
        const response = await fetch(request.url, { headers: request.headers });
        expect(response.status, id).toBe(400);
        expect(((await response.json()) as { error: { message: string } }).error.message, id).toMatch(/not an id of this turn's stream: /);
      }
    }
    expect(feeds()).toBe(0);

    // A live id as the route writes it: the events from step 1's first text delta on, its first 5 characters already shown.
    const durable = await durableRead(handle.workflowId);
    const firstText = durable.find(({ event }) => event.type === 'text-delta' && event.step === 1)!.offset;
    const resumed = await readSseFrom(url, { ...AUTH, 'last-event-id': `${firstText - 1}.1-1-5` }, (message) => message.event === 'end');
    expect(resumed.status).toBe(200);
    const after = shown(durable.filter((record) => record.offset >= firstText));
    expect(shown(resumed.messages.filter((message) => message.event === 'message').map(recordOf))).toEqual({ ...after, texts: { ...after.texts, 1: FIRST.slice(5) } });
  });
});

describe('/api/chat, live', () => {
  /** Posts a user message to /api/chat; `onChunk` sees each UI chunk as it arrives. */
  function chat(base: string, text: string, onChunk: (chunk: UIMessageChunk) => void = () => {}) {
    const id = `chat-${randomUUID()}`;
    const body = JSON.stringify({ id, model: MODEL, messages: [{ id: `m-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text }] }] });
    const chunks: UIMessageChunk[] = [];
    const reading = readSseFrom(
      `${base}/api/chat`,
      { ...AUTH, 'content-type': 'application/json' },
      (message) => {
        if (message.data === '[DONE]') return true;
        const chunk = JSON.parse(message.data) as UIMessageChunk;
        chunks.push(chunk);
        onChunk(chunk);
        return false;
      },
      { method: 'POST', body },
    );
    return { id, chunks, reading };
  }

  /** The message useChat builds from these chunks, and the errors it reported. */
  async function messageOf(chunks: UIMessageChunk[]): Promise<{ message: UIMessage; errors: string[] }> {
    const errors: string[] = [];
    const stream = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    let last: UIMessage | undefined;
    for await (const built of readUIMessageStream<UIMessage>({ stream, onError: (error) => errors.push(String(error)) })) last = structuredClone(built);
    return { message: last!, errors };
  }

  it("streams the step's text while every durable read of the API is held, and the browser gets the model's text exactly once", async () => {
    const gate = queryGate(turnpike.client);
    const { base } = await serveLive(gate.client);
    fake.script('openai', [{ text: SECOND, stream: { eventIntervalMs: 10 } }]);
    let text = '';
    let openedByReader = false;
    const sent = chat(base, 'Say it.', (chunk) => {
      if (chunk.type === 'text-delta') text += chunk.delta;
      if (gate.closed && text === SECOND) {
        openedByReader = true;
        gate.open();
      }
    });
    const { status } = await sent.reading;
    gate.open();
    expect(status).toBe(200);
    expect(openedByReader).toBe(true);
    expect(text).toBe(SECOND);
    const { message, errors } = await messageOf(sent.chunks);
    expect(errors).toEqual([]);
    expect(message.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual([SECOND]);
    expect(sent.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
  });

  it("builds the same message from a live two-step turn as the durable order does: a new step's text waits for the previous step's calls", async () => {
    const gate = queryGate(turnpike.client);
    const { base, client } = await serveLive(gate.client);
    fake.script('openai', [
      { text: FIRST, toolCalls: [{ name: 'record_action', input: { action: 'live-chat' } }], stream: { eventIntervalMs: 10 } },
      { text: SECOND, stream: { eventIntervalMs: 10 } },
    ]);
    let text = '';
    let firstShown!: () => void;
    const firstStep = new Promise<void>((resolve) => (firstShown = resolve));
    const sent = chat(base, 'Go.', (chunk) => {
      if (chunk.type === 'text-delta') text += chunk.delta;
      if (text === FIRST) firstShown();
    });
    // The first step's text arrives live with every durable read held; the second step's waits
    // for the first step's end and tool call, which only the durable stream has.
    await firstStep;
    expect(await turnpike.client.workflow.getHandle(`${sent.id}/turn-1`).result()).toMatchObject({ status: 'completed', text: SECOND });
    expect(text).toBe(FIRST);
    gate.open();
    expect((await sent.reading).status).toBe(200);
    const { message, errors } = await messageOf(sent.chunks);
    expect(errors).toEqual([]);
    expect(message.parts.map((part) => part.type)).toEqual(['step-start', 'text', 'tool-record_action', 'step-start', 'text']);
    expect(message.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual([FIRST, SECOND]);
    expect(message.parts[2]).toMatchObject({ state: 'output-available', input: { action: 'live-chat' } });
    expect(await client.turnResult(`${sent.id}/turn-1`)).toMatchObject({ status: 'completed', text: SECOND });
  });
});
