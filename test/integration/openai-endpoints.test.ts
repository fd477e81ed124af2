/**
 * OpenAI-compatible servers two ways, each against its own strict OpenAI fake on the real dev
 * server: named endpoints of turnpike's own `openai` provider (`endpoints` on the worker,
 * `model.endpoint` on a turn), and `@ai-sdk/openai-compatible` registered as an `ai-sdk` model.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const KEYS = { vllm: 'vllm-test-SECRET-0c4e11', llama: 'llama-test-SECRET-93aa70', compatible: 'compat-test-SECRET-2f7d45' };
const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };

let vllm: FakeProviderServer;
let llama: FakeProviderServer;
let compatible: FakeProviderServer;
let turnpike: TurnpikeHarness;
const saved = { ...process.env };

beforeAll(async () => {
  [vllm, llama, compatible] = await Promise.all([startFakeProviderServer(), startFakeProviderServer(), startFakeProviderServer()]);
  process.env.TEST_VLLM_KEY = KEYS.vllm;
  process.env.TEST_LLAMA_KEY = KEYS.llama;
  // The default OpenAI settings point nowhere useful: a turn that fell back to them would fail.
  process.env.OPENAI_API_KEY = 'sk-default-not-for-endpoints';
  process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
  const local = createOpenAICompatible({ name: 'local', baseURL: compatible.openaiBaseURL, apiKey: KEYS.compatible, includeUsage: true });
  turnpike = await startTurnpike({
    tools: testTools,
    endpoints: { vllm: { baseURL: vllm.openaiBaseURL, apiKeyEnv: 'TEST_VLLM_KEY' }, llama: { baseURL: llama.openaiBaseURL, apiKeyEnv: 'TEST_LLAMA_KEY' } },
    models: { local: local.chatModel('qwen3-32b') },
  });
});

afterAll(async () => {
  await turnpike?.stop();
  await Promise.all([vllm?.close(), llama?.close(), compatible?.close()]);
  process.env = saved;
});

describe('named OpenAI-compatible endpoints', () => {
  it('sends each turn to the endpoint it names, with that endpoint\'s key, and neither key nor URL enters history', async () => {
    vllm.script('openai', [{ text: 'vLLM here.' }]);
    llama.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'audit' } }] }, { text: 'llama.cpp here.' }]);
    const [onVllm, onLlama] = await Promise.all([
      turnpike.startTurn({ model: { provider: 'openai', endpoint: 'vllm', model: 'qwen3-32b' }, text: 'Who serves this turn?', modelCallOptions: fastRetries }),
      turnpike.startTurn({ model: { provider: 'openai', endpoint: 'llama', model: 'llama-3.3-70b' }, text: 'And this one?', modelCallOptions: fastRetries }),
    ]);
    expect(await onVllm.result()).toMatchObject({ status: 'completed', text: 'vLLM here.' });
    expect(await onLlama.result()).toMatchObject({ status: 'completed', text: 'llama.cpp here.', steps: 2 });

    expect(vllm.requests.map((request) => [request.body.model, request.headers.authorization, request.errors])).toEqual([['qwen3-32b', `Bearer ${KEYS.vllm}`, []]]);
    expect(JSON.stringify(vllm.requests[0].body.messages)).toContain('Who serves this turn?');
    expect(llama.requests.map((request) => [request.body.model, request.headers.authorization, request.errors])).toEqual([
      ['llama-3.3-70b', `Bearer ${KEYS.llama}`, []],
      ['llama-3.3-70b', `Bearer ${KEYS.llama}`, []],
    ]);
    expect(JSON.stringify(llama.requests.map((request) => request.body.messages))).not.toContain('Who serves this turn?');

    for (const handle of [onVllm, onLlama]) {
      const history = JSON.stringify(await handle.fetchHistory());
      for (const secret of [KEYS.vllm, KEYS.llama, vllm.openaiBaseURL, llama.openaiBaseURL]) expect(history).not.toContain(secret);
    }
  });

  it('fails the turn at once on an endpoint the worker does not have', async () => {
    const handle = await turnpike.startTurn({ model: { provider: 'openai', endpoint: 'ollama', model: 'qwen3' }, text: 'Hello', modelCallOptions: fastRetries });
    await expect(handle.result()).rejects.toThrow();
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).toContain('openai: this worker has no endpoint named \\"ollama\\"; it has vllm, llama');
  });

  it('refuses an endpoint on a provider that takes none, when the turn starts', async () => {
    const handle = await turnpike.startTurn({ model: { provider: 'anthropic', endpoint: 'vllm', model: 'claude-sonnet-4-6' }, text: 'Hello' });
    const error = await handle.result().then(
      () => undefined,
      (caught: unknown) => caught as Error & { cause?: Error },
    );
    expect(error?.cause?.message).toMatch(/model\.endpoint names an OpenAI-compatible endpoint; provider "anthropic" does not take it/);
  });
});

describe('@ai-sdk/openai-compatible as an ai-sdk model', () => {
  it('runs a turn through an approval against the strict OpenAI fake', async () => {
    compatible.script('openai', [
      { text: 'Checking first.', toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 2 } }], usage: { inputTokens: 40, outputTokens: 7 } },
      { text: 'Done on prod-db.' },
    ]);
    const handle = await turnpike.startTurn({ model: { provider: 'ai-sdk', model: 'local' }, text: 'Do the maintenance.', modelCallOptions: fastRetries });
    const [pending] = await waitForPending(handle, 1);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'bob' }] });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'Done on prod-db.', usage: { inputTokens: 50, outputTokens: 12 } });
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['guarded_action']);
    expect(compatible.requests.map((request) => [request.body.model, request.body.stream, request.headers.authorization, request.errors])).toEqual([
      ['qwen3-32b', true, `Bearer ${KEYS.compatible}`, []],
      ['qwen3-32b', true, `Bearer ${KEYS.compatible}`, []],
    ]);
    // The second request answers the call the first reply made, by its id.
    const toolMessage = compatible.requests[1].body.messages.find((message: { role: string }) => message.role === 'tool');
    const callId = compatible.requests[1].body.messages.find((message: { role: string }) => message.role === 'assistant').tool_calls[0].id;
    expect(toolMessage.tool_call_id).toBe(callId);
    expect(JSON.stringify(toolMessage.content)).toContain('prod-db');
  });
});
