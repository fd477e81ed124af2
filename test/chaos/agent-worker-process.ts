/**
 * The chaos tests' worker process (worker-process.ts) with a sub-agent: `billing_agent`, an
 * agent tool whose child turn may charge a card (approval-gated, effects recorded in files).
 */
import { DefaultLogger } from '@temporalio/worker';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { runWorker } from '../../worker/index.js';
import { chaosTools } from './chaos-tools.js';

const billingAgent = defineAgentTool({
  name: 'billing_agent',
  description: 'Charges what an order owes.',
  inputSchema: z.object({ order: z.string() }),
  agent: { model: { provider: 'openai', model: 'gpt-4.1-mini' }, system: 'You are the billing agent.', tools: ['charge_card'] },
  prompt: ({ order }) => `Charge what order ${order} owes.`,
});

await runWorker({
  tools: [...chaosTools, billingAgent],
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  workerOptions: { stickyQueueScheduleToStartTimeout: '1s' },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
