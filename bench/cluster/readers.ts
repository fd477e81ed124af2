/**
 * Readers on the cluster: `turns` streaming turns (the `openai` provider against a fake OpenAI
 * server of this scenario's, one text event every 20 ms), each read by `readers / turns` SSE
 * readers (`GET /api/turns/:id/events`) through one of the two API processes (turn i's readers
 * on process i mod 2, so each process reads half the turns). The fake holds every reply before
 * its first event until all readers are connected, then notes when it writes each turn's first
 * text: first token to reader is the time from that write to each reader holding it.
 * The NOTIFY traffic each process's `LISTEN` connection received over the figure is compared
 * with what its own readers' turns were sent: the goal is that a process receives only those.
 */
import { performance } from 'node:perf_hooks';
import { startFakeProviderServer, type FakeProviderServer } from '../../test/fake-provider/server.js';
import type { SSEFrame } from '../../test/fake-provider/sse.js';
import { PostgresLiveDeltas } from '../../activities/postgres-live/postgres-live-deltas.js';
import { percentile, round } from '../stats.js';
import type { ClusterTopology } from './topology.js';

const EVENT_INTERVAL_MS = 20;
const WORDS = 100;

export interface ReaderFigures {
  turns: number;
  readers: number;
  /** Streams that ended before `turn-finished` and were read on after their last event id. */
  reconnections: number;
  /** ms from the fake's write of a turn's first text to each reader holding it. */
  firstToken: { p50: number; p95: number; max: number };
  /** Every turn's pieces, as a listener of all the turns' channels received them. */
  allTurns: { notifications: number; characters: number };
  /** Per API process: notifications and characters its `LISTEN` connection received, and how many of the turns its readers read. */
  notify: Array<{ received: { notifications: number; characters: number }; readTurns: number }>;
}

/** A fake OpenAI whose every reply to `stream <turn>` is WORDS words, held until `release` and timed at its first text. */
export async function startStreamingFake(): Promise<{ fake: FakeProviderServer; release: () => void; firstWritten: Map<string, number> }> {
  const fake = await startFakeProviderServer();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const firstWritten = new Map<string, number>();
  fake.setDefault('openai', (body) => {
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    const prompt = String(messages.findLast((message) => message.role === 'user')?.content ?? '');
    const turn = /^stream (\S+)$/.exec(prompt)?.[1] ?? 'unknown';
    const onEvent = (frame: SSEFrame) => {
      const content = (frame.data as { choices?: Array<{ delta?: { content?: unknown } }> })?.choices?.[0]?.delta?.content;
      if (typeof content === 'string' && content.length > 0 && !firstWritten.has(turn)) firstWritten.set(turn, performance.now());
    };
    return { stream: { pauseAfterEvents: 0, resume: released, eventIntervalMs: EVENT_INTERVAL_MS, onEvent }, text: Array.from({ length: WORDS }, (_, index) => `word${index}`).join(' ') };
  });
  return { fake, release, firstWritten };
}

/**
 * Reads a turn's SSE stream to `turn-finished`, reconnecting after the last event id as
 * EventSource does when a stream ends early (an `event: error`, say); resolves with when the first
 * text-delta arrived and how many reconnections it took.
 */
async function readTurn(base: string, turnId: string, connected: () => void): Promise<{ first: number; reconnections: number }> {
  let first: number | undefined;
  let lastId: string | undefined;
  const errors: string[] = [];
  for (let reconnections = 0; reconnections <= 5; reconnections++) {
    const response = await fetch(`${base}/api/turns/${encodeURIComponent(turnId)}/events`, { headers: { authorization: 'Bearer tok-reader', ...(lastId ? { 'last-event-id': lastId } : {}) } });
    if (response.status !== 200) throw new Error(`reading ${turnId}: ${response.status} ${await response.text()}`);
    if (reconnections === 0) connected();
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const lines = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        const field = (name: string) => lines.filter((line) => line.startsWith(`${name}:`)).map((line) => line.slice(name.length + 1).trim()).join('\n');
        const data = field('data');
        if (!data) continue;
        if (field('event') === 'error') {
          errors.push(data);
          continue;
        }
        if (field('event') === 'end') continue;
        lastId = field('id') || lastId;
        const type = (JSON.parse(data) as { event?: { type?: string } }).event?.type;
        if (type === 'text-delta' && first === undefined) first = performance.now();
        if (type === 'turn-finished') {
          if (first === undefined) throw new Error(`${turnId}: finished without text`);
          return { first, reconnections };
        }
      }
    }
  }
  throw new Error(`${turnId}: the stream ended before turn-finished six times; errors: ${errors.join(' | ')}`);
}

export async function measureReaders(topology: ClusterTopology, streaming: Awaited<ReturnType<typeof startStreamingFake>>, options: { turns: number; readers: number; runId: string }): Promise<ReaderFigures> {
  const { apis } = topology;
  const perTurn = Math.max(1, Math.round(options.readers / options.turns));
  const turnIds = Array.from({ length: options.turns }, (_, index) => `cluster-stream-${options.runId}-${index}`);
  const before = await topology.liveReceived();
  // Started through the API by `reader`, who may then read them (api/read-access.ts).
  await Promise.all(turnIds.map(async (turnId, index) => {
    const response = await fetch(`${apis[index % apis.length]!.base}/api/turns`, {
      method: 'POST',
      headers: { authorization: 'Bearer tok-reader', 'content-type': 'application/json' },
      body: JSON.stringify({ turnId, input: { model: { provider: 'openai', model: 'gpt-4.1-mini', stream: true }, messages: [{ role: 'user', content: `stream ${turnId}` }] } }),
    });
    if (response.status >= 300) throw new Error(`POST /api/turns ${turnId}: ${response.status} ${await response.text()}`);
  }));
  // A listener of every turn's channel in this process: what all the turns' pieces amount to.
  const everything = new PostgresLiveDeltas({ connectionString: topology.postgresUrl });
  await everything.ready();
  const unsubscribe = turnIds.map((turnId) => everything.subscribe(turnId, () => {}));
  let connected = 0;
  let allConnected!: () => void;
  const connecting = new Promise<void>((resolve) => (allConnected = resolve));
  const check = () => ++connected === perTurn * turnIds.length && allConnected();
  const readings = turnIds.flatMap((turnId, index) => Array.from({ length: perTurn }, () => readTurn(apis[index % apis.length]!.base, turnId, check).then((read) => ({ turnId, ...read }))));
  await Promise.race([connecting, Promise.all(readings)]);
  // Every reader's request is in; give the API processes a moment to subscribe their LISTEN.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  streaming.release();
  const arrivals = await Promise.all(readings);
  const latencies = arrivals.map(({ turnId, first }) => first - streaming.firstWritten.get(turnId)!).sort((a, b) => a - b);
  const after = await topology.liveReceived();
  for (const stop of unsubscribe) stop();
  const all = everything.received;
  await everything.close();
  return {
    turns: turnIds.length,
    readers: arrivals.length,
    reconnections: arrivals.reduce((sum, { reconnections }) => sum + reconnections, 0),
    firstToken: { p50: round(percentile(latencies, 50), 0), p95: round(percentile(latencies, 95), 0), max: round(latencies.at(-1)!, 0) },
    allTurns: all,
    notify: after.map((received, index) => ({
      received: { notifications: received.notifications - before[index]!.notifications, characters: received.characters - before[index]!.characters },
      readTurns: turnIds.filter((_, turn) => turn % apis.length === index).length,
    })),
  };
}
