/** Order statistics for latency samples. */

export interface Summary {
  n: number;
  median: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/**
 * Nearest-rank percentile of an ascending array. Nearest-rank (not interpolation) so that a
 * reported p99 is always a latency that was actually observed; with fewer than 100 samples it
 * is the maximum, which the reports state through `n`.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    median: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Rounds for reports: enough digits to compare, not so many that noise looks like signal. */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function roundSummary(summary: Summary, digits = 2): Summary {
  return Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, key === 'n' ? value : round(value, digits)])) as unknown as Summary;
}

/** turnpike / floor; NaN when the floor figure is zero or missing. */
export function ratio(turnpike: number, floor: number): number {
  return floor > 0 && Number.isFinite(turnpike) ? turnpike / floor : Number.NaN;
}
