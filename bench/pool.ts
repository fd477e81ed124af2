/** Bounded concurrency for starting and driving many workflows without one promise per item at once. */

/**
 * Runs `task(0..count-1)` with at most `concurrency` in flight and returns the results in index
 * order. The first failure rejects the whole run (after in-flight tasks settle), because a
 * benchmark that silently drops failed turns would report flattering numbers.
 */
export async function runPool<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  let failure: unknown;
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, async () => {
    while (failure === undefined && next < count) {
      const index = next++;
      try {
        results[index] = await task(index);
      } catch (error) {
        failure ??= error;
      }
    }
  });
  await Promise.all(lanes);
  if (failure !== undefined) throw failure;
  return results;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value other than `undefined`, or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Fisher–Yates with a seeded generator, so a run's resume sample is reproducible. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  const random = () => {
    // xorshift32: good enough to pick a sample; deterministic across runs.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
