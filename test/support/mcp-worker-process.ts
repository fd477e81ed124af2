/**
 * A turnpike worker with MCP servers as its own process, run by `runWorker` as `npm run worker`
 * runs one: its health port serves `/mcp-servers`, its metrics port the `turnpike_mcp_server_up`
 * gauge, and its log (INFO and up, on stderr) says when a server goes down and comes back.
 * Env: TEMPORAL_ADDRESS, TURNPIKE_TASK_QUEUE, WORKFLOW_BUNDLE, TURNPIKE_HEALTH_PORT,
 * TURNPIKE_METRICS_ADDRESS, the provider variables, and TEST_MCP_SERVERS (JSON of `mcpServers`).
 * Prints "ready" (with its URLs) once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { runWorker } from '../../worker/index.js';

await runWorker({
  tools: [],
  mcpServers: JSON.parse(process.env.TEST_MCP_SERVERS!),
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('INFO', (entry) => process.stderr.write(`[${entry.level}] ${entry.message}\n`)) },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
