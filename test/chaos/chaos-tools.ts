/**
 * Tools for the chaos tests. They run in a worker process that the tests kill with SIGKILL,
 * so they record what happened in files, and `charge_card` behaves like a payment API that
 * honours idempotency keys: however often it is attempted, each key takes effect once.
 */
import { appendFileSync, mkdirSync, openSync, closeSync, writeSync, constants } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';

function recordsDirectory(): string {
  const directory = process.env.CHAOS_RECORDS_DIR;
  if (!directory) throw new Error('CHAOS_RECORDS_DIR is not set');
  mkdirSync(path.join(directory, 'effects'), { recursive: true });
  return directory;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Like a well-behaved tool: stops at once when its activity is cancelled (e.g. a worker shutting down). */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('aborted'));
    }, { once: true });
  });
}

export const chargeCard = defineTool({
  name: 'charge_card',
  description: 'Charges a card; needs approval.',
  inputSchema: z.object({ amount: z.number().positive() }),
  approval: true,
  activityOptions: { startToCloseTimeout: '3s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
  async execute({ amount }, { idempotencyKey }) {
    const directory = recordsDirectory();
    appendFileSync(path.join(directory, 'attempts.log'), `${JSON.stringify({ key: idempotencyKey, pid: process.pid })}\n`);
    // The window in which a SIGKILL interrupts a charge that has begun but not taken effect.
    await sleep(400);
    try {
      // O_EXCL: the first attempt for a key creates the effect; later ones find it.
      const fd = openSync(path.join(directory, 'effects', encodeURIComponent(idempotencyKey)), constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY);
      writeSync(fd, JSON.stringify({ amount, pid: process.pid }));
      closeSync(fd);
      return { charged: amount, duplicate: false };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { charged: amount, duplicate: true };
      throw error;
    }
  },
});

export const slowSync = defineTool({
  name: 'slow_sync',
  description: 'A slow server tool, so kills land during tool activities.',
  inputSchema: z.object({ n: z.number() }),
  activityOptions: { startToCloseTimeout: '3s', heartbeatTimeout: '1s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
  async execute({ n }, { heartbeat }) {
    for (let i = 0; i < 5; i++) {
      heartbeat(i);
      await sleep(100);
    }
    return { synced: n };
  },
});

export const longTask = defineTool({
  name: 'long_task',
  description: 'Runs for `ms` milliseconds unless cancelled, recording when each attempt starts, ends or is cancelled.',
  inputSchema: z.object({ ms: z.number().int().positive() }),
  activityOptions: { startToCloseTimeout: '60s', retry: { initialInterval: '200ms', maximumAttempts: 5 } },
  async execute({ ms }, { idempotencyKey, abortSignal }) {
    const directory = recordsDirectory();
    appendFileSync(path.join(directory, 'long-task.log'), `${JSON.stringify({ key: idempotencyKey, pid: process.pid, event: 'started' })}\n`);
    try {
      await sleepUnlessAborted(ms, abortSignal);
    } catch (error) {
      appendFileSync(path.join(directory, 'long-task.log'), `${JSON.stringify({ key: idempotencyKey, pid: process.pid, event: 'cancelled' })}\n`);
      throw error;
    }
    appendFileSync(path.join(directory, 'long-task.log'), `${JSON.stringify({ key: idempotencyKey, pid: process.pid, event: 'finished' })}\n`);
    return { ranFor: ms };
  },
});

export const chaosTools = [chargeCard, slowSync, longTask];
