/**
 * Claude on Amazon Bedrock and Google Vertex AI, GPT on Azure OpenAI, each through its official
 * client against a strict fake of the cloud (test/fake-provider/clouds.ts: SigV4, the STS token and
 * bearer header, the deployment URL and `api-version`) in front of the strict Anthropic and OpenAI
 * fakes, on the real dev server. The clouds' settings are the worker's (`clouds`); credentials come
 * from the environment and each cloud's credential chain.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { costOf, DEFAULT_PRICES, priceOf } from '../../activities/prices.js';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import type { AssistantMessage, ModelSettings, ProviderToolPart, ReasoningPart } from '../../workflows/types/index.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import type { CloudFake, CloudRequest } from '../fake-provider/clouds.js';
import type { FakeProviderServer } from '../fake-provider/server.js';
import { AZURE_KEY, BEDROCK_ID, cloudCases as cases, ENTRA_TOKEN, fastRetries, REASONING_DEPLOYMENT, startClouds, type CloudsHarness } from '../support/cloud-harness.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let clouds: CloudsHarness;
let base: FakeProviderServer;
let cloud: CloudFake;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;

beforeAll(async () => {
  clouds = await startClouds();
  ({ base, cloud, turnpike, client } = clouds);
});

afterAll(async () => {
  await clouds?.stop();
});

const cloudRequests = (kind: CloudRequest['cloud']) => cloud.requests.filter((request) => request.cloud === kind);

describe.each(cases)('$name', (cloudCase) => {
  it('parks on an approval, is approved and completes, streaming to a subscriber, with thinking carried across the park and its cost counted', async () => {
    const before = { cloud: cloudRequests(cloudCase.cloud).length, base: base.requests.length };
    base.script(cloudCase.upstream, [
      {
        ...(cloudCase.thinks ? { thinking: [{ text: 'prod-db needs one guarded action; it needs approval.' }] } : {}),
        text: 'Checking first.',
        toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 2 } }],
        usage: { inputTokens: 1200, outputTokens: 300 },
      },
      { text: 'Done on prod-db.', usage: { inputTokens: 1500, outputTokens: 40 } },
    ]);
    const handle = await turnpike.startTurn({ model: cloudCase.model, text: 'Do the maintenance on prod-db.', modelCallOptions: fastRetries });
    const [pending] = await waitForPending(handle, 1);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'bob' }] });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'Done on prod-db.' });
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['guarded_action']);
    const reached = cloudRequests(cloudCase.cloud).slice(before.cloud);
    expect(reached.map((request) => [request.status, request.errors])).toEqual([
      [200, []],
      [200, []],
    ]);
    const forwarded = base.requests.slice(before.base);
    expect(forwarded.map((request) => [request.provider, request.body.stream, request.errors])).toEqual([
      [cloudCase.upstream, true, []],
      [cloudCase.upstream, true, []],
    ]);
    if (cloudCase.thinks) {
      // Sent back first in the continuation, and accepted by the fake's signature check.
      const assistant = forwarded[1].body.messages.find((message: { role: string }) => message.role === 'assistant');
      expect(assistant.content[0]).toMatchObject({ type: 'thinking', thinking: 'prod-db needs one guarded action; it needs approval.' });
      expect(typeof assistant.content[0].signature).toBe('string');
    }

    const price = priceOf(DEFAULT_PRICES, cloudCase.priced);
    expect(price).toBeDefined();
    expect(result.usage.costUsd).toBeGreaterThan(0);
    expect(result.usage.costUsd).toBeCloseTo(costOf(price, result.usage)!, 6);

    const events: TurnEvent[] = [];
    for await (const record of client.turnEvents(handle.workflowId)) events.push(record.event);
    const streamed = (step: number) => events.map((event) => (event.type === 'text-delta' && event.step === step ? event.text : '')).join('');
    expect(streamed(1)).toBe('Checking first.');
    expect(streamed(2)).toBe('Done on prod-db.');
    const reasoning = events.filter((event) => event.type === 'reasoning-delta').map((event) => (event as { text: string }).text).join('');
    expect(reasoning).toBe(cloudCase.thinks ? 'prod-db needs one guarded action; it needs approval.' : '');

    const history = JSON.stringify(await handle.fetchHistory());
    for (const secret of [...cloudCase.secrets, cloud.url, base.url]) expect(history).not.toContain(secret);
  });

  it('retries a 429 with retry-after and completes', async () => {
    const before = cloudRequests(cloudCase.cloud).length;
    base.script(cloudCase.upstream, [{ status: 429, headers: { 'retry-after': '1' } }, { text: 'Through.' }]);
    const model = cloudCase.cloud === 'azure' ? { ...cloudCase.model, endpoint: 'entra' } : { provider: cloudCase.model.provider, model: cloudCase.model.model, stream: false };
    const handle = await turnpike.startTurn({ model, text: 'Go.', modelCallOptions: fastRetries });
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'Through.' });
    const reached = cloudRequests(cloudCase.cloud).slice(before);
    expect(reached.map((request) => request.status)).toEqual([429, 200]);
    if (cloudCase.cloud === 'azure') expect(reached.map((request) => request.headers.authorization)).toEqual([`Bearer ${ENTRA_TOKEN}`, `Bearer ${ENTRA_TOKEN}`]);
    if (cloudCase.cloud === 'bedrock') expect(reached.map((request) => new URL(request.url, cloud.url).pathname)).toEqual([`/model/${BEDROCK_ID}/invoke`, `/model/${BEDROCK_ID}/invoke`]);
  });

  it('answers a typed output, its constraints checked by the turn', async () => {
    const before = base.requests.length;
    // `minimum` is a constraint Anthropic's JSON outputs refuse: sent in a description, checked by the turn.
    const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } }, required: ['city', 'days'], additionalProperties: false };
    base.script(cloudCase.upstream, [{ json: { city: 'Lisbon', days: 0 } }, { json: { city: 'Lisbon', days: 4 } }]);
    const model = { provider: cloudCase.model.provider, endpoint: cloudCase.model.endpoint, model: cloudCase.model.model };
    const handle = await turnpike.startTurn({ model, text: 'Plan a trip.', output: { schema }, modelCallOptions: fastRetries });
    expect(await handle.result()).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 } });
    const forwarded = base.requests.slice(before);
    expect(forwarded.map((request) => request.errors)).toEqual([[], []]);
    const format = cloudCase.upstream === 'anthropic' ? forwarded[0].body.output_config.format : cloudCase.upstream === 'openai-responses' ? forwarded[0].body.text.format : forwarded[0].body.response_format;
    expect(format.type).toBe('json_schema');
  });

  it('fails at once on settings the worker does not have', async () => {
    const handle = await turnpike.startTurn({ model: { ...cloudCase.model, endpoint: 'us' }, text: 'Hello', modelCallOptions: fastRetries });
    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const failure = (error as WorkflowFailedError).cause?.cause as ApplicationFailure | undefined;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure?.type).toBe('InvalidModelSettings');
    expect(failure!.message).toMatch(new RegExp(`^${cloudCase.name}: this worker has no ${cloudCase.cloud} settings named "us"; it has `));
  });
});

describe('hosted tools on the clouds', () => {
  it("anthropic-vertex: Claude's web search beside a parked approval; its blocks and citations go back byte-exact and the search is priced", async () => {
    const before = base.requests.length;
    base.script('anthropic', [
      { hosted: [{ tool: 'web_search', query: 'card fee 2026', results: [{ url: 'https://fees.example/2026', title: 'Card fees 2026' }] }], citations: true, text: 'The fee is 51.', toolCalls: [{ name: 'guarded_action', input: { target: 'card', count: 51 } }] },
      { text: 'Charged.' },
    ]);
    const handle = await turnpike.startTurn({ model: { provider: 'anthropic-vertex', model: 'claude-sonnet-4-5', providerTools: [{ type: 'web_search', max_uses: 2 }] }, text: 'Find the fee and charge it.', modelCallOptions: fastRetries });
    const [pending] = await waitForPending(handle, 1);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'bob' }] });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Charged.' });
    const [first, second] = base.requests.slice(before);
    expect([first.errors, second.errors]).toEqual([[], []]);
    expect(first.body.tools).toContainEqual(expect.objectContaining({ type: 'web_search_20250305', max_uses: 2 }));
    const kept = (result.messages[0] as AssistantMessage).content.find((part): part is ProviderToolPart => part.type === 'provider-tool')!;
    const assistant = second.body.messages.find((message: { role: string }) => message.role === 'assistant');
    for (const block of kept.raw) expect(JSON.stringify(assistant.content)).toContain(JSON.stringify(block));
    expect(result.usage.webSearchRequests).toBe(1);
    expect(result.usage.costUsd! - costOf(priceOf(DEFAULT_PRICES, { provider: 'anthropic-vertex', model: 'claude-sonnet-4-5' }), { ...result.usage, webSearchRequests: 0 })!).toBeCloseTo(0.01, 7);
  });

  it('anthropic-bedrock and azure-openai refuse hosted tools at the start, naming who runs them', async () => {
    for (const model of [
      { provider: 'anthropic-bedrock', model: 'claude-sonnet-4-5', providerTools: [{ type: 'web_search' }] },
      { provider: 'azure-openai', endpoint: 'prod', model: 'gpt-4.1-mini', providerTools: [{ type: 'code_interpreter' }] },
    ] as ModelSettings[]) {
      const handle = await turnpike.startTurn({ model, text: 'Search.' });
      const error = await handle.result().catch((caught: unknown) => caught);
      expect(String(((error as WorkflowFailedError).cause as Error | undefined)?.message)).toMatch(new RegExp(`provider "${model.provider}" runs no hosted tools \\(anthropic and anthropic-vertex and openai-responses and azure-openai-responses do\\)`));
    }
  });
});

describe('azure-openai-responses: what only the Responses API has', () => {
  it('a reasoning model runs a code interpreter beside a parked approval; its reasoning and the hosted item go back byte-exact, and the container is priced', async () => {
    const before = base.requests.length;
    base.script('openai-responses', [
      {
        reasoning: [{ summary: ['Compute first, then the guarded action.'] }],
        hostedItems: [{ type: 'code_interpreter', code: 'print(6 * 7)', logs: '42' }],
        toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 42 } }],
      },
      { text: 'Ran it 42 times.' },
    ]);
    const model: ModelSettings = { provider: 'azure-openai-responses', endpoint: 'prod', model: 'o4-mini', maxTokens: 4000, reasoningEffort: 'low', providerTools: [{ type: 'code_interpreter' }] };
    const handle = await turnpike.startTurn({ model, text: 'Compute 6*7 and run the guarded action that many times.', modelCallOptions: fastRetries });
    const [pending] = await waitForPending(handle, 1);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'bob' }] });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Ran it 42 times.' });

    const [first, second] = base.requests.slice(before);
    expect([first.errors, second.errors]).toEqual([[], []]);
    // Azure names the deployment in the body; the fake forwards the model it runs.
    expect(cloud.requests.filter((request) => request.cloud === 'azure').slice(-2).map((request) => [new URL(request.url, cloud.url).pathname, (request.body as { model: string }).model])).toEqual([
      ['/openai/responses', REASONING_DEPLOYMENT],
      ['/openai/responses', REASONING_DEPLOYMENT],
    ]);
    expect(first.body.store).toBe(false);
    expect(first.body.tools).toContainEqual({ type: 'code_interpreter', container: { type: 'auto' } });
    // What the turn kept goes back as it came: the hosted item verbatim, the reasoning item with its
    // encrypted content (which the fake checks it issued).
    const kept = (result.messages[0] as AssistantMessage).content;
    const hosted = kept.find((part): part is ProviderToolPart => part.type === 'provider-tool')!;
    const reasoning = kept.find((part): part is ReasoningPart => part.type === 'reasoning')!;
    const sentBack = (type: string) => second.body.input.find((item: { type: string }) => item.type === type);
    expect(JSON.stringify(sentBack('code_interpreter_call'))).toBe(JSON.stringify(hosted.raw[0]));
    expect(sentBack('reasoning')).toMatchObject({ id: reasoning.itemId, encrypted_content: reasoning.encryptedContent });
    expect(typeof reasoning.encryptedContent).toBe('string');
    expect(result.usage.codeInterpreterContainers).toBe(1);
    expect(result.toolCalls).toContainEqual(expect.objectContaining({ toolName: 'code_interpreter', executedBy: 'provider' }));
  });

  it('refuses at the start a hosted tool Azure does not run, and an API version without the Responses API', async () => {
    const search = await turnpike.startTurn({ model: { provider: 'azure-openai-responses', model: 'gpt-4.1-mini', endpoint: 'prod', providerTools: [{ type: 'web_fetch' }] }, text: 'Fetch.' });
    const refused = await search.result().catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(WorkflowFailedError);
    expect(String(((refused as WorkflowFailedError).cause as Error | undefined)?.message)).toMatch(/"web_fetch" is not a hosted tool of azure-openai-responses \(web_search, file_search, code_interpreter, mcp\)/);
    const handle = await turnpike.startTurn({ model: { provider: 'azure-openai-responses', model: 'gpt-4.1-mini', endpoint: 'old' }, text: 'Hello', modelCallOptions: fastRetries });
    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(String(((error as WorkflowFailedError).cause?.cause as Error | undefined)?.message)).toMatch(/Resource not found/);
  });
});

describe('azure: a key-based and an Entra deployment on one worker, AZURE_OPENAI_API_KEY set', () => {
  it.each([
    ['azure-openai', 'openai'],
    ['azure-openai-responses', 'openai-responses'],
  ] as const)('%s: the key-based turn sends the key, the Entra turn its bearer token alone', async (provider, upstream) => {
    const before = cloudRequests('azure').length;
    base.script(upstream, [{ text: 'By key.' }, { text: 'By Entra.' }]);
    const keyed = await turnpike.startTurn({ model: { provider, endpoint: 'keyed', model: 'gpt-4.1-mini' }, text: 'Hello', modelCallOptions: fastRetries });
    expect(await keyed.result()).toMatchObject({ status: 'completed', text: 'By key.' });
    const entra = await turnpike.startTurn({ model: { provider, endpoint: 'entra', model: 'gpt-4.1-mini' }, text: 'Hello', modelCallOptions: fastRetries });
    expect(await entra.result()).toMatchObject({ status: 'completed', text: 'By Entra.' });
    const reached = cloudRequests('azure').slice(before);
    expect(reached.map((request) => [request.status, request.errors, request.headers['api-key'], request.headers.authorization])).toEqual([
      [200, [], AZURE_KEY, undefined],
      [200, [], undefined, `Bearer ${ENTRA_TOKEN}`],
    ]);
  });
});

describe('credentials the cloud refuses', () => {
  it.each([
    ['anthropic-bedrock', 'AWS_SECRET_ACCESS_KEY', { provider: 'anthropic-bedrock', model: 'claude-sonnet-4-5' }, 'bedrock', 403, 'The request signature we calculated does not match the signature you provided.'],
    ['azure-openai', 'TEST_AZURE_KEY', { provider: 'azure-openai', endpoint: 'prod', model: 'gpt-4.1-mini' }, 'azure', 401, 'Access denied due to invalid subscription key or wrong API endpoint.'],
  ] as const)('%s: a wrong secret in the environment fails the turn with the cloud\'s own refusal, unretried', async (_, variable, model, kind, status, text) => {
    const before = cloudRequests(kind).length;
    const good = process.env[variable];
    process.env[variable] = `${good}-rotated-WRONG`;
    try {
      const handle = await turnpike.startTurn({ model, text: 'Hello', modelCallOptions: fastRetries });
      const error = await handle.result().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect(String(((error as WorkflowFailedError).cause?.cause as Error | undefined)?.message)).toContain(text);
    } finally {
      process.env[variable] = good;
    }
    expect(cloudRequests(kind).slice(before).map((request) => [request.status, request.errors.length])).toEqual([[status, 1]]);
  });
});

describe('a worker without a cloud', () => {
  it('fails a turn on that cloud at once, saying how to declare its settings', async () => {
    const bare = await startTurnpike({ tools: testTools });
    try {
      const handle = await bare.startTurn({ model: { provider: 'anthropic-bedrock', model: 'claude-sonnet-4-5' }, text: 'Hello', modelCallOptions: fastRetries });
      const error = await handle.result().catch((caught: unknown) => caught);
      const failure = (error as WorkflowFailedError).cause?.cause as ApplicationFailure;
      expect(failure.type).toBe('InvalidModelSettings');
      expect(failure.message).toBe('anthropic-bedrock: this worker has no bedrock settings; declare them with createWorker({ clouds: { bedrock: { <name>: { … } } } }) or new TurnpikePlugin({ clouds })');
    } finally {
      await bare.stop();
    }
  });
});
