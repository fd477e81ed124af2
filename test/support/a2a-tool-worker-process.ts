/**
 * A turnpike worker as its own process for the remote A2A agent tests, to be killed with SIGKILL
 * while a remote task works: one tool, `warehouse`, the A2A agent at TEST_A2A_URL (followed every
 * 200 ms). Env as for test/chaos/worker-process.ts. Prints "ready" once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { defineA2aAgentTool } from '../../activities/a2a-remote/a2a-agent-tool.js';
import { runWorker } from '../../worker/index.js';

const warehouse = defineA2aAgentTool({ name: 'warehouse', url: process.env.TEST_A2A_URL!, description: 'Answers questions about orders.', pollInterval: '200ms', timeout: '2m' });

await runWorker({
  tools: [warehouse],
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  // A killed worker's sticky tasks move to the shared queue after this, not after 10s.
  workerOptions: { stickyQueueScheduleToStartTimeout: '1s' },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
