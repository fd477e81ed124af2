/**
 * The chaos tests' worker process (worker-process.ts) with a sub-agent: `billing_agent`, an
 * agent tool whose child turn may charge a card (approval-gated, effects recorded in files).
 */
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { chaosTools } from './chaos-tools.js';
import { runChaosWorker } from './chaos-worker.js';

const billingAgent = defineAgentTool({
  name: 'billing_agent',
  description: 'Charges what an order owes.',
  inputSchema: z.object({ order: z.string() }),
  agent: { model: { provider: 'openai', model: 'gpt-4.1-mini' }, system: 'You are the billing agent.', tools: ['charge_card'] },
  prompt: ({ order }) => `Charge what order ${order} owes.`,
});

await runChaosWorker({
  tools: [...chaosTools, billingAgent],
});
