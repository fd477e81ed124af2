/**
 * The share of the fleet's token limit kept for interactive turns (`tokenLimit.interactiveShare`),
 * on the dev server: a batch's calls have booked the limit's next windows when an interactive turn
 * starts. With the share, the interactive call is booked in the reserve and reaches the provider
 * before most of the batch's; without it (the control), it is booked after all of them. The
 * provider, which allows a little more than the counter, refuses nothing either way.
 *
 * No timing is asserted: the order in which the requests reach the provider, and the waits the
 * counter gave (an in-memory counter's wait is 0 exactly when a booking may go at once).
 */
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { InMemoryModelTokenCounter, type ModelTokenCounter, type TokenBookingRequest } from '../../activities/model-tokens/token-counter.js';
import { providerRateLimit } from '../fake-provider/rate-limit.js';
import { useClientWithFakes } from '../support/client-with-fakes.js';
import { noteStarted } from '../support/history-recorder.js';
import { startModelQueueWorker } from '../support/model-queue-worker.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

/**
 * The counter: 600 tokens over any 6 s, a quarter kept for interactive calls (150: one call of
 * about 113 expected); the shared lane's 450 take three of the batch's calls a window. The
 * provider: 600 tokens over any 4 s, each call charged 100.
 */
const USAGE = { inputTokens: 90, outputTokens: 10 };
const PROVIDER = { requestsPerMinute: 60_000, tokensPerMinute: 9_000, windowMs: 4_000 };
const LIMIT = { tokensPerMinute: 6_000, windowSeconds: 6, outputTokens: 100 };
const BATCH = 8;

const suite = useClientWithFakes();

/** The in-memory counter, with each booking's request and the wait it was given. */
function recordingCounter(): ModelTokenCounter & { booked: Array<TokenBookingRequest & { waitMs: number }> } {
  const counter = new InMemoryModelTokenCounter();
  const booked: Array<TokenBookingRequest & { waitMs: number }> = [];
  return {
    description: counter.description,
    booked,
    async book(request) {
      const placed = await counter.book(request);
      booked.push({ ...request, ...placed });
      return placed;
    },
    settle: (key, id, tokens) => counter.settle(key, id, tokens),
  };
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** `BATCH` batch turns, then, once all their calls are booked, one interactive turn; the questions in the order they reached the provider. */
async function batchThenInteractive(interactiveShare: number) {
  const taskQueue = `tokens-reserve-${randomUUID()}`;
  const modelQueue = `${taskQueue}-models`;
  const counter = recordingCounter();
  const limit = providerRateLimit({ ...PROVIDER, reply: { text: 'ok', usage: USAGE } });
  const arrived: string[] = [];
  suite.fake.setDefault('openai', (body: { model?: string; messages: Array<{ role: string; content: unknown }> }) => {
    const reply = limit.respond(body);
    if (!('status' in reply)) arrived.push(String(body.messages.filter((message) => message.role === 'user').at(-1)?.content));
    return reply;
  });
  // Room in the worker for every call: they all wait there for their bookings, none in the queue.
  const stop = await startModelQueueWorker(taskQueue, { taskQueue: modelQueue, tokenLimit: { ...LIMIT, counter, interactiveShare }, maxConcurrentCalls: BATCH + 2 });
  try {
    const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
    const model = { provider: 'openai', model: 'gpt-4.1-mini' } as const;
    const start = (question: string, priority: 'batch' | 'interactive') =>
      turnpike.startTurn({ model, messages: [{ role: 'user', content: question }], tools: [] }, { turnId: `tokens-reserve-${randomUUID()}`, tenant: priority === 'batch' ? 'acme' : 'globex', priority });
    const handles = [];
    for (let index = 0; index < BATCH; index++) handles.push(await start(`batch question ${index}`, 'batch'));
    await until(() => counter.booked.length === BATCH);
    handles.push(await start('interactive question', 'interactive'));
    handles.forEach(noteStarted);
    const results = await Promise.all(handles.map((handle) => handle.result()));
    expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
    expect(limit.rejected).toBe(0);
    // The interactive call's booking is the last made.
    return { arrived, batchWaits: counter.booked.slice(0, BATCH).map((booking) => booking.waitMs), interactive: counter.booked[BATCH] };
  } finally {
    await stop();
  }
}

describe('a share of the token limit kept for interactive turns', () => {
  it("lets an interactive turn's call go at once, ahead of the batch's booked calls; without it the call waits behind them all", async () => {
    const withShare = await batchThenInteractive(0.25);
    // The batch had booked more than a window ahead when the interactive call came.
    expect(Math.max(...withShare.batchWaits)).toBeGreaterThan(LIMIT.windowSeconds * 1_000);
    expect(withShare.interactive).toMatchObject({ interactive: true, reserved: 150, waitMs: 0 });
    expect(withShare.arrived.length).toBe(BATCH + 1);
    expect(withShare.arrived.indexOf('interactive question')).toBeLessThan(BATCH / 2);

    const control = await batchThenInteractive(0);
    expect(control.interactive?.reserved).toBeUndefined();
    expect(control.interactive?.waitMs).toBeGreaterThan(0);
    expect(control.arrived.length).toBe(BATCH + 1);
    expect(control.arrived.at(-1)).toBe('interactive question');
  }, 180_000);
});
