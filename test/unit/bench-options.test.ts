/** The bench's flags for the cluster figure: sizes, and that it runs only when named. */
import { describe, expect, it } from 'vitest';
import { parseBenchOptions, SCENARIOS } from '../../bench/options.js';

describe('npm run bench flags for the cluster figure', () => {
  it('parks 100,000 turns by default, 10,000 with --quick, and what --turns says', () => {
    expect(parseBenchOptions(['--only', 'cluster']).clusterTurns).toBe(100_000);
    expect(parseBenchOptions(['--only', 'cluster', '--quick']).clusterTurns).toBe(10_000);
    expect(parseBenchOptions(['--only', 'cluster', '--quick', '--turns', '500']).clusterTurns).toBe(500);
    expect(() => parseBenchOptions(['--only', 'cluster', '--turns', '0'])).toThrow(/--turns must be a positive integer/);
  });

  it('runs the cluster only when --only names it, and names its results cluster / cluster-quick', () => {
    expect(parseBenchOptions([]).scenarios).toEqual([...SCENARIOS]);
    expect(parseBenchOptions([]).scenarios).not.toContain('cluster');
    expect(parseBenchOptions(['--only', 'cluster']).scenarios).toEqual(['cluster']);
    expect(parseBenchOptions(['--only', 'cluster']).name).toBe('cluster');
    expect(parseBenchOptions(['--only', 'cluster', '--quick']).name).toBe('cluster-quick');
    expect(() => parseBenchOptions(['--only', 'clustr'])).toThrow(/unknown scenario "clustr".*cluster/);
  });
});

describe('npm run bench flags for the eval figure', () => {
  it('evaluates 1,000 turns by default, 100 with --quick, what --turns says up to 1,000, once per --eval-concurrency', () => {
    expect(parseBenchOptions(['--only', 'eval'])).toMatchObject({ evalTurns: 1_000, evalConcurrency: [4, 16], scenarios: ['eval'], name: 'eval' });
    expect(parseBenchOptions(['--only', 'eval', '--quick'])).toMatchObject({ evalTurns: 100, name: 'eval-quick' });
    expect(parseBenchOptions(['--only', 'eval', '--turns', '250', '--eval-concurrency', '8']).evalTurns).toBe(250);
    expect(parseBenchOptions(['--only', 'eval', '--eval-concurrency', '8']).evalConcurrency).toEqual([8]);
    expect(parseBenchOptions(['--only', 'eval', '--turns', '5000']).evalTurns).toBe(1_000);
    expect(() => parseBenchOptions(['--only', 'eval', '--eval-concurrency', '4,x'])).toThrow(/--eval-concurrency must be a positive integer/);
  });

  it('runs only when --only names it', () => {
    expect(parseBenchOptions([]).scenarios).not.toContain('eval');
  });
});
