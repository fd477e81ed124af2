/**
 * The files of a fresh app that uses turnpike with Claude on Amazon Bedrock and installs
 * `@anthropic-ai/bedrock-sdk` as its only provider package: not `openai`, not `@anthropic-ai/sdk`
 * (which bedrock-sdk depends on, so npm installs it as bedrock-sdk's dependency). Its worker names
 * Bedrock, Vertex and Azure settings (`clouds`); `src/run.ts` runs a Bedrock turn through an
 * approval against the Bedrock fake whose URL it is given (`BEDROCK_BASE_URL`; credentials from
 * the AWS chain: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`), then one turn on each provider
 * whose package the app left out, and on first-party `anthropic`, and prints what happened as one
 * JSON line. test/integration/packed-bedrock.test.ts installs the packed package into it; its
 * tsconfig.json and src/turns.ts are every fresh app's (packed-app.ts).
 */
import { APP_TURNS_FILE, STRICT_APP_TSCONFIG } from './packed-app.js';

export const BEDROCK_APP_FILES: Record<string, string> = {
  'tsconfig.json': STRICT_APP_TSCONFIG,
  'src/turns.ts': APP_TURNS_FILE,
  'src/run.ts': `
import { defineTool, type ModelSettings } from 'turnpike';
import { TurnpikeClient } from 'turnpike/client';
import { createWorker, TurnpikePlugin } from 'turnpike/worker';
import { z } from 'zod';
import { main, outcomeOf, parkedCall } from './turns.js';

/** Every database this process failed over. */
const failedOver: string[] = [];

const failOver = defineTool({
  name: 'fail_over',
  description: 'Fail a database over to its replica; a person approves each.',
  inputSchema: z.object({ database: z.string() }),
  approval: true,
  execute: async ({ database }) => {
    failedOver.push(database);
    return { failedOver: database };
  },
});

const bedrock: ModelSettings = { provider: 'anthropic-bedrock', endpoint: 'eu', model: 'claude-sonnet-4-5', maxTokens: 1024 };

main(new TurnpikePlugin(), async ({ namespace, client, workerConnection }) => {
  const taskQueue = process.env.BEDROCK_TASK_QUEUE!;
  const worker = await createWorker({
    tools: [failOver],
    connection: workerConnection,
    namespace,
    taskQueue,
    clouds: {
      bedrock: { eu: { region: process.env.BEDROCK_REGION, baseURL: process.env.BEDROCK_BASE_URL, models: { 'claude-sonnet-4-5': process.env.BEDROCK_MODEL_ID! } } },
      // Named, but their packages are not installed: their turns fail naming the package.
      vertex: { eu: { region: 'europe-west1', projectId: 'not-installed' } },
      azure: { prod: { endpoint: 'https://not-installed.openai.azure.com', apiVersion: '2024-10-21' } },
    },
  });
  const turnpike = new TurnpikeClient({ client, taskQueue });
  return worker.runUntil(async () => {
    const turnId = taskQueue + '-turn';
    const handle = await turnpike.startTurn({ model: bedrock, messages: [{ role: 'user', content: 'Fail orders-db over.' }], tools: [failOver.name] }, { turnId });
    const parked = await parkedCall(turnpike, turnId);
    const failedOverWhileParked = [...failedOver];
    await turnpike.approveToolCall(turnId, { approvalId: parked.approvalId!, approved: true, approver: 'dba' });
    const { status, steps, text, toolCalls, usage } = await handle.result();
    return {
      bedrock: {
        parked: { kind: parked.kind, toolName: parked.toolName, input: parked.input },
        failedOverWhileParked,
        status,
        steps,
        text,
        toolCalls: toolCalls.map((call) => ({ toolName: call.toolName, outcome: call.outcome, output: call.output })),
        failedOver,
        priced: (usage.costUsd ?? 0) > 0,
      },
      vertex: await outcomeOf(turnpike, taskQueue + '-vertex', { provider: 'anthropic-vertex', endpoint: 'eu', model: 'claude-sonnet-4-5' }),
      azure: await outcomeOf(turnpike, taskQueue + '-azure', { provider: 'azure-openai', endpoint: 'prod', model: 'gpt-4.1-mini' }),
      openai: await outcomeOf(turnpike, taskQueue + '-openai', { provider: 'openai', model: 'gpt-4.1-mini' }),
      anthropic: await outcomeOf(turnpike, taskQueue + '-anthropic', { provider: 'anthropic', model: 'claude-sonnet-4-5' }),
    };
  });
});
`,
};
