import { defineConfig } from 'vitest/config';

/**
 * Integration files that run one at a time, after the others: they load the machine on purpose
 * (hundreds of turns and readers, npm installs and type-checks of the packed package) or time a
 * stall or a pause, so a file beside them would slow them or be slowed past its own limits.
 */
const ALONE = [
  'test/integration/packed-package.test.ts',
  'test/integration/packed-bedrock.test.ts',
  'test/integration/testing-kit-packed.test.ts',
  'test/integration/determinism-under-load.test.ts',
  'test/integration/long-turn-readers.test.ts',
  'test/integration/closed-turn-reads.test.ts',
  'test/integration/many-readers.test.ts',
  'test/integration/fuzz-scale.test.ts',
  'test/integration/stalled-workflow-task.test.ts',
  'test/integration/decision-while-worker-stalls.test.ts',
  'test/integration/provider-headers.test.ts',
  'test/integration/model-capacity-crash.test.ts',
];

/**
 * Files side by side. Most of a test's time is spent waiting on Temporal (timers, polls, a worker
 * process starting), so two files at once share two cores well; vitest's default on a 2-core
 * machine is one. `TURNPIKE_TEST_WORKERS` overrides it.
 */
const SIDE_BY_SIDE = Number(process.env.TURNPIKE_TEST_WORKERS ?? 2);

export default defineConfig({
  test: {
    // Temporal's native worker runs best in child processes, not worker threads.
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers: SIDE_BY_SIDE, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: ALONE,
          // One real Temporal dev server and one workflow bundle for the whole run, shared with
          // `integration-alone` (the setup is counted, see global-setup.ts).
          globalSetup: ['test/support/global-setup.ts'],
          maxWorkers: SIDE_BY_SIDE,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-alone',
          include: ALONE,
          globalSetup: ['test/support/global-setup.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        // Kills workers and restarts servers: each file brings its own dev server.
        test: { name: 'chaos', include: ['test/chaos/**/*.test.ts'], testTimeout: 300_000, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        // PostgreSQL, a Temporal server built from source and worker processes, all its own. The
        // hook's limit covers a first run that builds the server and the Web UI with Go.
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          testTimeout: 1_200_000,
          hookTimeout: 2_700_000,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
