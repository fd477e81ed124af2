import { getEventListeners } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { waitInWindows } from '../../connection/windowed-wait.js';

// A lazy connection never dials: the waits below only read the abort signal the client gives each window.
const connection = Connection.lazy({ address: '127.0.0.1:1' });
const client = new Client({ connection });

/** A wait that answers on its `answerOn`-th window, and otherwise ends when its window's signal aborts, as a long poll does. */
function waitAnsweringOn(answerOn: number, windows: AbortSignal[]) {
  return () =>
    new Promise<string>((resolve, reject) => {
      const signal = connection.callContextStorage.getStore()?.abortSignal;
      if (!signal) return reject(new Error('no window signal'));
      windows.push(signal);
      if (windows.length === answerOn) return resolve(`answered in window ${answerOn}`);
      signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
}

describe('waitInWindows', () => {
  it('waits again in a new window until the wait answers, leaving no listener on the caller’s signal', async () => {
    const stop = new AbortController();
    const windows: AbortSignal[] = [];
    await expect(waitInWindows(client, stop.signal, waitAnsweringOn(4, windows), 10)).resolves.toBe('answered in window 4');
    expect(windows).toHaveLength(4);
    expect(new Set(windows).size).toBe(4);
    expect(windows.slice(0, 3).every((signal) => signal.aborted)).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('resolves undefined once the caller stops, ending the window at once', async () => {
    const stop = new AbortController();
    const windows: AbortSignal[] = [];
    const waiting = waitInWindows(client, stop.signal, waitAnsweringOn(Infinity, windows), 60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort();
    await expect(waiting).resolves.toBeUndefined();
    expect(windows).toHaveLength(1);
    expect(windows[0]!.aborted).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('throws a failure of the wait itself, not taken for a window’s end', async () => {
    const stop = new AbortController();
    await expect(waitInWindows(client, stop.signal, () => Promise.reject(new Error('the turn failed')), 10)).rejects.toThrow('the turn failed');
  });

  it('does not wait at all for a caller already stopped', async () => {
    const stop = new AbortController();
    stop.abort();
    let called = false;
    await expect(waitInWindows(client, stop.signal, async () => (called = true), 10)).resolves.toBeUndefined();
    expect(called).toBe(false);
  });
});
