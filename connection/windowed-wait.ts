/**
 * A long wait on the Temporal client (a workflow's result) that can be stopped, made in windows.
 *
 * The client adds a listener to a call's abort signal for every long poll of the history (one
 * about every 20 s while a turn waits) and never removes it, so one signal held across a turn
 * parked for hours gathers thousands. Each window has a signal of its own, aborted when the window
 * ends or when `stop` is, and a new window starts the wait again.
 */
import type { Client } from '@temporalio/client';

/** How long one window of a wait lasts before a new one starts. */
export const WAIT_WINDOW_MS = 60_000;

/** What `wait` resolves to, or undefined once `stop` is aborted. A failure of `wait` itself is thrown. */
export async function waitInWindows<T>(client: Client, stop: AbortSignal, wait: () => Promise<T>, windowMs = WAIT_WINDOW_MS): Promise<T | undefined> {
  while (!stop.aborted) {
    const window = new AbortController();
    const endWindow = () => window.abort();
    const timer = setTimeout(endWindow, windowMs);
    stop.addEventListener('abort', endWindow, { once: true });
    try {
      return await client.withAbortSignal(window.signal, wait);
    } catch (error) {
      // The window ended (or the caller stopped): wait again, or stop. Anything else is the wait's own failure.
      if (!window.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
      stop.removeEventListener('abort', endWindow);
    }
  }
  return undefined;
}
