/**
 * A turnpike worker as its own process for the OpenAI hosted-tools tests, to be killed with
 * SIGKILL while a turn is parked: one approval-gated tool (`release_gate`) and the remote MCP
 * servers of TEST_REMOTE_MCP_SERVERS (JSON of `remoteMcpServers`). Env as for
 * test/chaos/worker-process.ts, plus the provider variables. Prints "ready" once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';
import { runWorker } from '../../worker/index.js';

const releaseGate = defineTool({
  name: 'release_gate',
  description: 'Releases a version; a person approves every call.',
  inputSchema: z.object({ version: z.string() }),
  approval: true,
  async execute(input) {
    return { released: input.version };
  },
});

await runWorker({
  tools: [releaseGate],
  remoteMcpServers: JSON.parse(process.env.TEST_REMOTE_MCP_SERVERS ?? '{}'),
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  // A killed worker's sticky tasks move to the shared queue after this, not after 10s.
  workerOptions: { stickyQueueScheduleToStartTimeout: '1s' },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
