/**
 * Tools for tests that record every execution in this process (the test's Worker runs in
 * the test process), so a test can prove what ran, how often, and with which idempotency key.
 */
import { z } from 'zod';
import { defineClientTool, defineTool } from '../../activities/tools.js';
import { demoTools } from '../../demo/tools.js';

export interface Execution {
  toolName: string;
  input: unknown;
  toolCallId: string;
  idempotencyKey: string;
  attempt: number;
}

export const executions: Execution[] = [];
const attemptsByKey = new Map<string, number>();

function record(toolName: string, input: unknown, context: { toolCallId: string; idempotencyKey: string }): Execution {
  const attempt = (attemptsByKey.get(context.idempotencyKey) ?? 0) + 1;
  attemptsByKey.set(context.idempotencyKey, attempt);
  const execution = { toolName, input, toolCallId: context.toolCallId, idempotencyKey: context.idempotencyKey, attempt };
  executions.push(execution);
  return execution;
}

/** Executions of one workflow's calls. */
export function executionsOf(workflowId: string): Execution[] {
  return executions.filter((execution) => execution.idempotencyKey.startsWith(`${workflowId}/`));
}

export const recordAction = defineTool({
  name: 'record_action',
  description: 'Records an action.',
  inputSchema: z.object({ action: z.string().min(1) }),
  async execute(input, context) {
    record('record_action', input, context);
    return { done: input.action };
  },
});

export const flakyAction = defineTool({
  name: 'flaky_action',
  description: 'Fails on its first attempt, succeeds on the second.',
  inputSchema: z.object({ action: z.string() }),
  activityOptions: { retry: { maximumAttempts: 3, initialInterval: '100ms' } },
  async execute(input, context) {
    const { attempt } = record('flaky_action', input, context);
    if (attempt === 1) throw new Error('transient failure on the first attempt');
    return { done: input.action, attempt };
  },
});

export const brokenAction = defineTool({
  name: 'broken_action',
  description: 'Always fails.',
  inputSchema: z.object({}),
  activityOptions: { retry: { maximumAttempts: 2, initialInterval: '50ms' } },
  async execute(input, context) {
    record('broken_action', input, context);
    throw new Error('the backend is down');
  },
});

export const guardedAction = defineTool({
  name: 'guarded_action',
  description: 'Needs approval from alice or bob.',
  inputSchema: z.object({ target: z.string().min(3), count: z.number().int().positive() }),
  approval: true,
  approvers: ['alice', 'bob'],
  async execute(input, context) {
    record('guarded_action', input, context);
    return { guarded: input.target, count: input.count };
  },
});

export const financeTransfer = defineTool({
  name: 'finance_transfer',
  description: 'Moves money; the finance group decides, or the named controller.',
  inputSchema: z.object({ account: z.string().min(1), amount: z.number().positive().max(1_000_000) }),
  approval: true,
  approvers: ['controller'],
  approverGroups: ['finance'],
  async execute(input, context) {
    record('finance_transfer', input, context);
    return { moved: input.amount, account: input.account };
  },
});

export const pickColour = defineClientTool({
  name: 'pick_colour',
  description: 'The user picks a colour in the browser.',
  inputSchema: z.object({ options: z.array(z.string()).min(1) }),
  outputSchema: z.object({ colour: z.enum(['red', 'green', 'blue']) }),
});

export const testTools = [...demoTools, recordAction, flakyAction, brokenAction, guardedAction, financeTransfer, pickColour];

/** A scripted-model request that calls `tool` with `input` (see activities/providers/scripted.ts). */
export function use(tool: string, input: unknown): string {
  return `use ${tool} with ${JSON.stringify(input)}`;
}
