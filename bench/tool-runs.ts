/**
 * How many times each benchmark tool's `execute` ran in this process: the tools' "effects", which
 * the evaluation figure checks an evaluation run does not cause. Read by the worker process's
 * samples (`ProcessSample.toolRuns`).
 */
export const toolRuns: Record<string, number> = {};

export function countToolRun(name: string): void {
  toolRuns[name] = (toolRuns[name] ?? 0) + 1;
}
