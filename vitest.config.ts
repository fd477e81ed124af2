import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Temporal's native worker runs best in child processes, not worker threads.
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One real Temporal dev server and one workflow bundle for the whole run.
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      {
        extends: true,
        // Kills workers and restarts servers: each file brings its own dev server.
        test: { name: 'chaos', include: ['test/chaos/**/*.test.ts'], testTimeout: 300_000 },
      },
      {
        extends: true,
        // PostgreSQL, a Temporal server built from source and worker processes, all its own. The
        // hook's limit covers a first run that builds the server and the Web UI with Go.
        test: { name: 'cluster', include: ['test/cluster/**/*.test.ts'], testTimeout: 1_200_000, hookTimeout: 2_700_000 },
      },
    ],
  },
});
