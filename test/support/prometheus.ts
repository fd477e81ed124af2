/** Reading a Prometheus text exposition (the worker's metrics endpoint) in tests. */

/** Sums the samples of metric `name` (a counter's `_total` too) whose labels include `labels`. */
export function sample(metrics: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    const match = new RegExp(`^${name}(?:_total)?\\{([^}]*)\\} ([0-9.e+]+)$`).exec(line);
    if (!match) continue;
    const present = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) total += Number(match[2]);
  }
  return total;
}
