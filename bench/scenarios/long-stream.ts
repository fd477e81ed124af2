/**
 * A long stream within one run's budget: one model step that streams for `--stream-minutes`
 * (30 by default, 2 with `--quick`), a word every {@link WORD_INTERVAL_MS}, from the fake
 * OpenAI server, followed by {@link READERS} readers from its start, each on its own feed (as
 * readers in that many processes). At the end, the run's per-run counts against Temporal's
 * default limits: signals (10,000), updates (2,000), events (51,200), history bytes (50 MB).
 * The goal: at most half of each.
 */
import { readEventStream } from '../../client/event-subscription.js';
import { turnEventsQuery } from '../../workflows/messages/definitions.js';
import type { BenchContext, Systems } from '../context.js';
import { FAKE_OPENAI_MODEL } from '../fake-openai-settings.js';
import { historySize } from '../history-size.js';
import { turnInput } from '../turnpike-system.js';

const WORD_INTERVAL_MS = 50;
const READERS = 10;
export const RUN_LIMITS = { signals: 10_000, updates: 2_000, events: 51_200, protoBytes: 50 * 1024 * 1024 } as const;

export interface LongStreamFigures {
  minutes: number;
  words: number;
  readers: number;
  /** Per-run counts of the turn's (only) run. */
  run: { signals: number; updates: number; events: number; protoBytes: number };
  /** Each count as a share of its limit. */
  share: Record<keyof typeof RUN_LIMITS, number>;
  /** Every reader read every event to turn-finished. */
  eventsPerReader: number[];
  seconds: number;
}

export async function measureLongStream(context: BenchContext, systems: Systems): Promise<LongStreamFigures> {
  const minutes = context.options.streamMinutes ?? (context.options.quick ? 2 : 30);
  const words = Math.round((minutes * 60_000) / WORD_INTERVAL_MS);
  context.fakeOpenAI.setStreamControl({ eventIntervalMs: WORD_INTERVAL_MS });
  const started = performance.now();
  try {
    const input = {
      ...turnInput(`write ${words} words`, [], { provider: 'openai', model: FAKE_OPENAI_MODEL, stream: true }),
      modelCallOptions: { startToCloseTimeout: `${minutes + 10}m` },
    };
    const handle = await context.client.workflow.start('agentTurn', { taskQueue: systems.turnpike.taskQueue, workflowId: `long-stream-${process.pid}-${Date.now()}`, args: [input] });
    const readers = Array.from({ length: READERS }, async () => {
      let seen = 0;
      for await (const _ of readEventStream(context.client, handle.workflowId, turnEventsQuery, { isLast: (event) => event.type === 'turn-finished' })) seen++;
      return seen;
    });
    const result = (await handle.result()) as { status: string };
    if (result.status !== 'completed') throw new Error(`the long-stream turn ended ${result.status}`);
    const eventsPerReader = await Promise.all(readers);
    const size = await historySize(handle);
    const run = {
      signals: size.eventTypes.WORKFLOW_EXECUTION_SIGNALED ?? 0,
      updates: size.eventTypes.WORKFLOW_EXECUTION_UPDATE_ACCEPTED ?? 0,
      events: size.events,
      protoBytes: size.protoBytes,
    };
    const share = Object.fromEntries(Object.entries(RUN_LIMITS).map(([key, limit]) => [key, run[key as keyof typeof run] / limit])) as LongStreamFigures['share'];
    context.log(`  long stream: ${minutes} min, ${JSON.stringify(run)}`);
    return { minutes, words, readers: READERS, run, share, eventsPerReader, seconds: (performance.now() - started) / 1000 };
  } finally {
    context.fakeOpenAI.setStreamControl(undefined);
  }
}
