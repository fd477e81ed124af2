/**
 * What works for `anthropic` and `openai` works the same on the clouds (Claude on Bedrock and
 * Vertex AI, GPT on Azure OpenAI over Chat Completions and the Responses API), each through its
 * official client against the strict cloud fake (test/support/cloud-harness.ts): prompt caching
 * and its priced cache reads, a reply cut off by its token limit, a refusal, and a subscriber that
 * gets a step's first text delta while the cloud still holds the rest of the stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOf, DEFAULT_PRICES, priceOf } from '../../activities/prices.js';
import type { ModelSettings } from '../../workflows/types/index.js';
import { cloudCases, fastRetries, startClouds, type CloudCase, type CloudsHarness } from '../support/cloud-harness.js';

let clouds: CloudsHarness;

beforeAll(async () => {
  clouds = await startClouds();
});

afterAll(async () => {
  await clouds?.stop();
});

/** Long enough (well over the 1,024-token minimum by the Anthropic fake's count) to be cached. */
const longSystem = `You are a careful operations agent. ${'Record every action you take and explain it to the operator in plain words. '.repeat(60)}`;

/** Each upstream's own values for a reply cut off by its limit, and for a refusal. */
const CUT_OFF = { anthropic: 'max_tokens', openai: 'length', 'openai-responses': 'max_output_tokens' } as const;
const REFUSAL = {
  anthropic: { reply: { text: 'I can help with part of', finishReason: 'refusal' }, wire: 'refusal', text: 'I can help with part of' },
  openai: { reply: { text: 'I can help with part of', finishReason: 'content_filter' }, wire: 'content_filter', text: 'I can help with part of' },
  'openai-responses': { reply: { refusal: 'I cannot help with that.' }, wire: 'refusal', text: '' },
} as const;
/** Where each upstream fake holds its stream: after the opening events and the first word of text. */
const HOLD_AFTER = { anthropic: 4, openai: 2, 'openai-responses': 5 } as const;

type Upstream = keyof typeof CUT_OFF;
const upstreamOf = (cloudCase: CloudCase) => cloudCase.upstream as Upstream;
/** The case's model without thinking: what a cut-off, a refusal or a plain answer is asked with. */
const plain = (cloudCase: CloudCase, extra: Partial<ModelSettings> = {}): ModelSettings => ({
  provider: cloudCase.model.provider,
  ...(cloudCase.model.endpoint ? { endpoint: cloudCase.model.endpoint } : {}),
  model: cloudCase.model.model,
  maxTokens: 512,
  ...extra,
});

describe.each(cloudCases)('$name', (cloudCase) => {
  const upstream = upstreamOf(cloudCase);

  it('prices cache reads as cached input, and sends no cache breakpoints when promptCaching is off', async () => {
    const { base, turnpike, cloudRequests } = clouds;
    const before = { cloud: cloudRequests(cloudCase.cloud).length, base: base.requests.length };
    if (upstream === 'anthropic') {
      // Claude: the turn marks its prefix with cache_control, and the fake's cache serves it on the next step.
      base.script(upstream, [{ text: 'Step 1.', toolCalls: [{ name: 'record_action', input: { action: 'audit-1' } }] }, { text: 'Step 2.', toolCalls: [{ name: 'record_action', input: { action: 'audit-2' } }] }, { text: 'Both recorded.' }]);
    } else {
      // GPT: Azure caches prompts itself and reports the tokens it read from its cache.
      base.script(upstream, [
        { text: 'Step 1.', toolCalls: [{ name: 'record_action', input: { action: 'audit-1' } }], usage: { inputTokens: 1400, outputTokens: 20, cachedInputTokens: 0 } },
        { text: 'Step 2.', toolCalls: [{ name: 'record_action', input: { action: 'audit-2' } }], usage: { inputTokens: 1450, outputTokens: 20, cachedInputTokens: 1280 } },
        { text: 'Both recorded.', usage: { inputTokens: 1500, outputTokens: 10, cachedInputTokens: 1408 } },
      ]);
    }
    const handle = await turnpike.startTurn({ model: plain(cloudCase), system: longSystem, text: 'Audit the fleet, one action at a time.', tools: ['record_action'], modelCallOptions: fastRetries });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 3, text: 'Both recorded.' });
    expect(cloudRequests(cloudCase.cloud).slice(before.cloud).map((request) => [request.status, request.errors])).toEqual([
      [200, []],
      [200, []],
      [200, []],
    ]);
    const forwarded = base.requests.slice(before.base);
    expect(forwarded.map((request) => request.errors)).toEqual([[], [], []]);
    if (upstream === 'anthropic') {
      expect(JSON.stringify(forwarded[0].body)).toContain('"cache_control":{"type":"ephemeral"}');
      // Steps 2 and 3 read the prompt of the step before from the cache.
      expect(result.usage.cachedInputTokens).toBeGreaterThan(1024);
    } else {
      expect(result.usage).toMatchObject({ inputTokens: 4350, cachedInputTokens: 2688 });
    }
    const price = priceOf(DEFAULT_PRICES, cloudCase.priced)!;
    expect(result.usage.costUsd).toBeCloseTo(costOf(price, result.usage)!, 9);
    // Cached tokens are cheaper: the same usage without cache reads costs more.
    expect(costOf(price, { ...result.usage, cachedInputTokens: 0 })!).toBeGreaterThan(result.usage.costUsd!);

    if (upstream !== 'anthropic') return;
    const beforeOff = base.requests.length;
    base.script(upstream, [{ text: 'Done without caching.' }]);
    const uncached = await turnpike.startTurn({ model: plain(cloudCase, { promptCaching: false }), system: longSystem, text: 'Say done.', modelCallOptions: fastRetries });
    expect(await uncached.result()).toMatchObject({ status: 'completed', text: 'Done without caching.', usage: { cachedInputTokens: 0 } });
    const [off] = base.requests.slice(beforeOff);
    expect(off.errors).toEqual([]);
    expect(JSON.stringify(off.body)).not.toContain('cache_control');
  });

  it('ends the turn as max-tokens when the reply is cut off by its limit, with the partial text', async () => {
    const { base, turnpike, cloudRequests } = clouds;
    const before = cloudRequests(cloudCase.cloud).length;
    base.script(upstream, [{ text: 'The summary of what happened is that the', finishReason: CUT_OFF[upstream] }]);
    const handle = await turnpike.startTurn({ model: plain(cloudCase), text: 'Summarize the incident.', modelCallOptions: fastRetries });
    const result = await handle.result();

    expect(result).toMatchObject({
      status: 'max-tokens',
      steps: 1,
      text: 'The summary of what happened is that the',
      cutOff: { step: 1, finishReason: 'length', providerFinishReason: CUT_OFF[upstream] },
    });
    expect(cloudRequests(cloudCase.cloud).slice(before).map((request) => request.status)).toEqual([200]);
  });

  it('ends the turn as refused when the model declines, without retrying it', async () => {
    const { base, turnpike, cloudRequests } = clouds;
    const before = cloudRequests(cloudCase.cloud).length;
    const refusal = REFUSAL[upstream];
    base.script(upstream, [refusal.reply]);
    const handle = await turnpike.startTurn({ model: plain(cloudCase), text: 'Something the model will not do.', modelCallOptions: fastRetries });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'refused', steps: 1, text: refusal.text, toolCalls: [], cutOff: { step: 1, finishReason: 'content-filter', providerFinishReason: refusal.wire } });
    expect(cloudRequests(cloudCase.cloud).slice(before).map((request) => request.status)).toEqual([200]);
  });

  it("gives a subscriber a step's first text delta while the cloud still holds the rest of the stream", async () => {
    const { base, turnpike, client } = clouds;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const text = 'The parcel left the depot at nine and arrives tomorrow.';
    base.script(upstream, [{ text, stream: { pauseAfterEvents: HOLD_AFTER[upstream], resume: released } }]);

    const before = base.requests.length;
    const handle = await turnpike.startTurn({ model: plain(cloudCase), text: 'Where is my parcel?', modelCallOptions: fastRetries });
    const iterator = client.turnEvents(handle.workflowId)[Symbol.asyncIterator]();
    try {
      const first = await iterator.next();
      // The fake still holds the rest of the reply, so the model activity cannot have completed.
      expect(first.value?.event).toMatchObject({ type: 'text-delta', step: 1, text: 'The ' });
      const description = await handle.describe();
      expect(description.raw.pendingActivities?.map((activity) => activity.activityType?.name)).toEqual(['callModel']);
      expect(base.requests.slice(before).map((request) => request.stream)).toEqual([undefined]);
      release();
      const seen = [first.value!.event];
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value.event);
      expect(seen.map((event) => (event.type === 'text-delta' ? event.text : '')).join('')).toBe(text);
      expect(await handle.result()).toMatchObject({ status: 'completed', text });
      expect(base.requests.slice(before).map((request) => [request.errors, request.stream])).toEqual([[[], 'complete']]);
    } finally {
      release();
      await iterator.return?.();
    }
  });
});
