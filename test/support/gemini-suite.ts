/**
 * The setup of the files that hold the `ai-sdk` provider to what the native providers do
 * (ai-sdk-parity.test.ts, ai-sdk-crossing.test.ts): the strict Gemini fake
 * (test/fake-provider/gemini.ts), a Turnpike worker with the real `@ai-sdk/google` registered by
 * name (`gemini`, `flash3`, and `searching` / `coding`, which also offer Google Search or code
 * execution), a TurnpikeClient and the HTTP API, started once for the file; each test's Gemini
 * requests are cleared before it.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { TurnpikeClient } from '../../client/index.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput, Message } from '../../workflows/types/index.js';
import { startFakeGemini, type FakeGemini, type GeminiRequest } from '../fake-provider/gemini.js';
import type { AiSdkLanguageModel } from '../../worker/index.js';
import { serveApi, type ServedApi } from './api-server.js';
import { testTools } from './test-tools.js';
import { startTurnpike, type TurnpikeHarness } from './turnpike-harness.js';

const GEMINI_KEY = 'gemini-test-parity-7c1f';


/**
 * A registered model that lets Gemini search the web itself: every call also offers the
 * provider's `google_search` (or `code_execution`) tool, as an application's own wrapper (or the AI SDK's
 * `wrapLanguageModel`) would; turnpike sends only function tools.
 */
function withGoogleSearch(model: ReturnType<ReturnType<typeof createGoogleGenerativeAI>>, tool: 'google_search' | 'code_execution' = 'google_search'): AiSdkLanguageModel {
  const search = { type: 'provider' as const, id: `google.${tool}` as const, name: tool, args: {} };
  type Options = Parameters<typeof model.doStream>[0];
  const withSearch = (options: Options): Options => ({ ...options, tools: [...(options.tools ?? []), search] });
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    doGenerate: ((options: Options) => model.doGenerate(withSearch(options))) as AiSdkLanguageModel['doGenerate'],
    doStream: ((options: Options) => model.doStream(withSearch(options))) as AiSdkLanguageModel['doStream'],
  };
}

const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };
export const thinking = { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } };

function startGeminiTurn(
  turnpike: TurnpikeHarness,
  text: string,
  model: Partial<AgentTurnInput['model']> = {},
  extra: Partial<AgentTurnInput> & { history?: Message[]; startedBy?: string } = {},
): Promise<WorkflowHandle<typeof agentTurn>> {
  const { history, ...rest } = extra;
  return turnpike.startTurn({
    model: { provider: 'ai-sdk', model: 'gemini', ...model },
    ...(history ? { messages: [...history, { role: 'user', content: text }] } : { text }),
    modelCallOptions: fastRetries,
    ...rest,
  });
}

export const errorsOf = (requests: GeminiRequest[]) => requests.flatMap((request) => request.errors);

export interface GeminiSuite {
  gemini: FakeGemini;
  turnpike: TurnpikeHarness;
  client: TurnpikeClient;
  api: ServedApi;
  /** A turn of `text` on the worker's Gemini model (`model` overrides), with fast retries. */
  startGeminiTurn(text: string, model?: Partial<AgentTurnInput['model']>, extra?: Partial<AgentTurnInput> & { history?: Message[]; startedBy?: string }): Promise<WorkflowHandle<typeof agentTurn>>;
}

export function useGeminiSuite(): GeminiSuite {
  const suite = {} as GeminiSuite;
  beforeAll(async () => {
    suite.gemini = await startFakeGemini(GEMINI_KEY);
    const google = createGoogleGenerativeAI({ baseURL: suite.gemini.baseURL, apiKey: GEMINI_KEY });
    suite.turnpike = await startTurnpike({
      tools: testTools,
      models: { gemini: google('gemini-2.5-flash'), flash3: google('gemini-3-flash-preview'), searching: withGoogleSearch(google('gemini-2.5-flash')), coding: withGoogleSearch(google('gemini-2.5-flash'), 'code_execution') },
    });
    suite.client = new TurnpikeClient({ client: suite.turnpike.client, taskQueue: suite.turnpike.taskQueue });
    suite.api = await serveApi(suite.turnpike);
  });

  afterAll(async () => {
    await suite.api?.api.close();
    await suite.turnpike?.stop();
    await suite.gemini?.close();
  });

  beforeEach(() => {
    suite.gemini.requests.length = 0;
  });

  suite.startGeminiTurn = (text, model = {}, extra = {}) => startGeminiTurn(suite.turnpike, text, model, extra);
  return suite;
}
