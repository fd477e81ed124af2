/**
 * The files of a fresh app that uses turnpike with Claude on Amazon Bedrock and installs
 * `@anthropic-ai/bedrock-sdk` as its only provider package: not `openai`, not `@anthropic-ai/sdk`
 * (which bedrock-sdk depends on, so npm installs it as bedrock-sdk's dependency). Its worker names
 * Bedrock, Vertex and Azure settings (`clouds`); `src/run.ts` runs a Bedrock turn through an
 * approval against the Bedrock fake whose URL it is given (`BEDROCK_BASE_URL`; credentials from
 * the AWS chain: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`), then one turn on each provider
 * whose package the app left out, and on first-party `anthropic`, and prints what happened as one
 * JSON line. test/integration/packed-bedrock.test.ts installs the packed package into it.
 */
export const BEDROCK_APP_FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      types: ['node'],
      strict: true,
      skipLibCheck: false,
      outDir: 'dist',
      rootDir: 'src',
    },
    include: ['src'],
  }),
  'src/run.ts': `
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { defineTool, type ModelSettings } from 'turnpike';
import { TurnpikeClient } from 'turnpike/client';
import { connectionOptionsFromEnvironment, createWorker, TurnpikePlugin } from 'turnpike/worker';
import { z } from 'zod';

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

/** The failure and its causes, outermost first. */
function chainOf(error: unknown): Array<{ type?: string; message: string }> {
  const chain: Array<{ type?: string; message: string }> = [];
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const type = (current as { type?: unknown }).type;
    chain.push({ ...(typeof type === 'string' ? { type } : {}), message: current.message });
  }
  return chain;
}

async function outcomeOf(turnpike: TurnpikeClient, turnId: string, model: ModelSettings) {
  const handle = await turnpike.startTurn({ model, messages: [{ role: 'user', content: 'Say hello.' }], modelCallOptions: { retry: { maximumAttempts: 1 } } }, { turnId });
  return handle.result().then(() => [{ message: 'completed' }], chainOf);
}

const bedrock: ModelSettings = { provider: 'anthropic-bedrock', endpoint: 'eu', model: 'claude-sonnet-4-5', maxTokens: 1024 };

async function main(): Promise<void> {
  const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
  const taskQueue = process.env.BEDROCK_TASK_QUEUE!;
  const workerConnection = await NativeConnection.connect(connectionOptions);
  const connection = await Connection.connect(connectionOptions);
  const client = new Client({ connection, namespace, plugins: [new TurnpikePlugin()] });
  try {
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
    const result = await worker.runUntil(async () => {
      const turnId = taskQueue + '-turn';
      const handle = await turnpike.startTurn({ model: bedrock, messages: [{ role: 'user', content: 'Fail orders-db over.' }], tools: [failOver.name] }, { turnId });
      let parked = (await turnpike.turnState(turnId).catch(() => undefined))?.pending[0];
      for (let attempt = 0; !parked && attempt < 300; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        parked = (await turnpike.turnState(turnId).catch(() => undefined))?.pending[0];
      }
      if (!parked) throw new Error('the turn never parked');
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
    console.log(JSON.stringify(result));
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`,
};
