/**
 * The files of a fresh app that uses turnpike with one AI SDK provider package, `@ai-sdk/google`,
 * and neither `openai` nor `@anthropic-ai/sdk` (test/integration/packed-package.test.ts installs
 * the packed package into it). Its worker registers a Gemini model by name; `src/run.ts` runs a
 * turn on it through an approval against the Gemini fake whose URL and key it is given
 * (`GEMINI_BASE_URL`, `GEMINI_API_KEY`) and prints what happened as one JSON line. Its
 * tsconfig.json is the strict app's (NodeNext, library checks on; packed-app.ts).
 */
import { APP_TURNS_FILE, STRICT_APP_TSCONFIG } from './packed-app.js';

export const GEMINI_APP_FILES: Record<string, string> = {
  'tsconfig.json': STRICT_APP_TSCONFIG,
  'src/turns.ts': APP_TURNS_FILE,
  'src/run.ts': `
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { defineTool, type ModelSettings } from 'turnpike';
import { TurnpikeClient } from 'turnpike/client';
import { createWorker, TurnpikePlugin } from 'turnpike/worker';
import { z } from 'zod';
import { main, parkedCall } from './turns.js';

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

main(new TurnpikePlugin(), async ({ namespace, client, workerConnection }) => {
  const taskQueue = process.env.GEMINI_TASK_QUEUE!;
  const google = createGoogleGenerativeAI({ baseURL: process.env.GEMINI_BASE_URL, apiKey: process.env.GEMINI_API_KEY });
  const worker = await createWorker({ tools: [restartService], connection: workerConnection, namespace, taskQueue, models: { gemini: google('gemini-2.5-flash') } });
  const turnpike = new TurnpikeClient({ client, taskQueue });
  return worker.runUntil(async () => {
    const turnId = taskQueue + '-turn';
    const handle = await turnpike.startTurn({ model: gemini, messages: [{ role: 'user', content: 'Restart the billing service.' }], tools: [restartService.name] }, { turnId });
    const parked = await parkedCall(turnpike, turnId);
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
});
`,
};
