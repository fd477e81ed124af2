/**
 * The files of a fresh app that uses turnpike with one AI SDK provider package, `@ai-sdk/google`,
 * and neither `openai` nor `@anthropic-ai/sdk` (test/integration/packed-package.test.ts installs
 * the packed package into it). Its worker registers a Gemini model by name; `src/run.ts` runs a
 * turn on it through an approval against the Gemini fake whose URL and key it is given
 * (`GEMINI_BASE_URL`, `GEMINI_API_KEY`) and prints what happened as one JSON line. Its
 * tsconfig.json is the lean app's (strict NodeNext, library checks on).
 */
export const GEMINI_APP_FILES: Record<string, string> = {
  'src/run.ts': `
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { defineTool, type ModelSettings } from 'turnpike';
import { TurnpikeClient } from 'turnpike/client';
import { connectionOptionsFromEnvironment, createWorker, TurnpikePlugin } from 'turnpike/worker';
import { z } from 'zod';

/** Every service this process restarted. */
const restarted: string[] = [];

const restartService = defineTool({
  name: 'restart_service',
  description: 'Restart a service; a person approves each restart.',
  inputSchema: z.object({ service: z.string() }),
  approval: true,
  execute: async ({ service }) => {
    restarted.push(service);
    return { restarted: service };
  },
});

const gemini: ModelSettings = { provider: 'ai-sdk', model: 'gemini', providerOptions: { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } } };

async function main(): Promise<void> {
  const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
  const taskQueue = process.env.GEMINI_TASK_QUEUE!;
  const google = createGoogleGenerativeAI({ baseURL: process.env.GEMINI_BASE_URL, apiKey: process.env.GEMINI_API_KEY });
  const workerConnection = await NativeConnection.connect(connectionOptions);
  const connection = await Connection.connect(connectionOptions);
  const client = new Client({ connection, namespace, plugins: [new TurnpikePlugin()] });
  try {
    const worker = await createWorker({ tools: [restartService], connection: workerConnection, namespace, taskQueue, models: { gemini: google('gemini-2.5-flash') } });
    const turnpike = new TurnpikeClient({ client, taskQueue });
    const result = await worker.runUntil(async () => {
      const turnId = taskQueue + '-turn';
      const handle = await turnpike.startTurn({ model: gemini, messages: [{ role: 'user', content: 'Restart the billing service.' }], tools: [restartService.name] }, { turnId });
      let parked = (await turnpike.turnState(turnId).catch(() => undefined))?.pending[0];
      for (let attempt = 0; !parked && attempt < 300; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        parked = (await turnpike.turnState(turnId).catch(() => undefined))?.pending[0];
      }
      if (!parked) throw new Error('the turn never parked');
      const restartedWhileParked = [...restarted];
      await turnpike.approveToolCall(turnId, { approvalId: parked.approvalId!, approved: true, approver: 'oncall' });
      const { status, steps, text, toolCalls } = await handle.result();
      return {
        parked: { kind: parked.kind, toolName: parked.toolName, input: parked.input },
        restartedWhileParked,
        status,
        steps,
        text,
        toolCalls: toolCalls.map((call) => ({ toolName: call.toolName, outcome: call.outcome, output: call.output })),
        restarted,
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
