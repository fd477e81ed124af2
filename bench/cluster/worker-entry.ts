/**
 * A worker process of the cluster bench (bench/scenarios/cluster.ts), configured from the
 * environment as a deployment's is (`runWorker`: TEMPORAL_*, TURNPIKE_LIVE_POSTGRES_URL for the
 * live channel, OPENAI_* for the streaming turns). Three approval-gated tools with different
 * approvers (the third for one turn in 100), so an approver's listing is filtered by rights; each returns the wall-clock time it
 * ran, the "effect" a decision's latency is measured to (all processes share this machine's
 * clock). Env: TURNPIKE_TASK_QUEUE, WORKFLOW_BUNDLE. Prints `ready …` once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';
import { runWorker } from '../../worker/index.js';

const effect = (name: string, approver: string) =>
  defineTool({
    name,
    description: `An action ${approver} approves; returns when it ran.`,
    inputSchema: z.object({ n: z.number().int() }),
    approval: true,
    approvers: [approver],
    async execute(input) {
      return { n: input.n, ranAt: Date.now() };
    },
  });

export const CLUSTER_BENCH_TOOLS = {
  first: { tool: 'bench_charge', approver: 'approver-1' },
  second: { tool: 'bench_refund', approver: 'approver-2' },
  /** One turn in 100 (bench/cluster/park.ts): the queue of an approver with few calls among many parked. */
  rare: { tool: 'bench_review', approver: 'approver-3' },
} as const;

await runWorker({
  tools: Object.values(CLUSTER_BENCH_TOOLS).map(({ tool, approver }) => effect(tool, approver)),
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
