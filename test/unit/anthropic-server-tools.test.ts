/**
 * Claude's server tools through the real `@anthropic-ai/sdk` against the strict fake, streamed and
 * not: each `server_tool_use` and its result block become one provider-tool part whose blocks go
 * back exactly as received, cited text keeps its citations, the code execution container is carried,
 * usage counts searches and fetches; and the fake refuses what the API refuses.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callAnthropic, convertToAnthropicRequest } from '../../activities/providers/anthropic.js';
import type { ProviderCallOptions } from '../../activities/providers/errors.js';
import { costOf, DEFAULT_PRICES, priceOf } from '../../activities/prices.js';
import type { AssistantMessage, Message, ModelSettings, ModelStepInput, ProviderToolPart } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer, type Json, type ScriptedHostedCall } from '../fake-provider/server.js';

let server: FakeProviderServer;
beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => server?.close());
beforeEach(() => server.reset());

const options = (): ProviderCallOptions => ({ apiKey: 'sk-ant-test', baseURL: server.anthropicBaseURL });
const tools = [{ name: 'charge_card', description: 'Charges a card.', inputSchema: { type: 'object', properties: { amount: { type: 'number' } } } }];

function stepInput(messages: Message[], model: Partial<ModelSettings>): ModelStepInput {
  return { model: { provider: 'anthropic', model: 'claude-sonnet-4-6', ...model }, messages, tools };
}

const search: ScriptedHostedCall = { tool: 'web_search', query: 'card fees 2026', results: [{ url: 'https://fees.example/a', title: 'Fees A' }, { url: 'https://fees.example/b', title: 'Fees B' }] };
const fetch: ScriptedHostedCall = { tool: 'web_fetch', url: 'https://fees.example/a', title: 'Fees A', text: 'A card fee is 2%.' };
const run: ScriptedHostedCall = { tool: 'code_execution', command: 'python -c "print(100*1.02)"', stdout: '102.0\n' };
const serverBlockTypes = new Set(['server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'bash_code_execution_tool_result']);

describe.each([true, false])('server tools (stream: %s)', (stream) => {
  it.each([
    ['web_search', search, { url: 'https://fees.example/b', title: 'Fees B' }],
    ['web_fetch', fetch, { url: 'https://fees.example/a', title: 'Fees A' }],
    ['code_execution', run, undefined],
  ] as const)('%s: one provider-tool part, its blocks sent back exactly as received', async (name, call, source) => {
    server.script('anthropic', [
      { hosted: [call], text: 'Found it.', ...(name === 'web_search' ? { citations: true as const } : {}), toolCalls: [{ name: 'charge_card', input: { amount: 102 } }] },
      { text: 'Charged.' },
    ]);
    const input = stepInput([{ role: 'user', content: 'Charge the fee.' }], { stream, providerTools: [{ type: name, ...(name === 'code_execution' ? {} : { max_uses: 2 }) }] });

    const first = await callAnthropic(input, options());

    const issued = server.requests[0]!.reply.content as Json[];
    const part = first.message.content.find((candidate): candidate is ProviderToolPart => candidate.type === 'provider-tool')!;
    expect(part).toMatchObject({ provider: 'anthropic', toolName: name, toolCallId: issued[0].id });
    expect(part.raw).toEqual(issued.filter((block) => serverBlockTypes.has(block.type)));
    if (source) expect(part.sources).toContainEqual(source);
    if (name === 'code_execution') {
      expect(part.output).toEqual({ stdout: '102.0\n', stderr: '', returnCode: 0 });
      expect(part.container?.id).toBe(server.requests[0]!.reply.container.id);
    }
    expect(first.usage.webSearchRequests).toBe(name === 'web_search' ? 1 : undefined);
    expect(first.usage.webFetchRequests).toBe(name === 'web_fetch' ? 1 : undefined);
    const tools = server.requests[0]!.body.tools as Json[];
    expect(tools.map((tool) => tool.type ?? 'custom')).toEqual(['custom', { web_search: 'web_search_20250305', web_fetch: 'web_fetch_20250910', code_execution: 'code_execution_20250825' }[name]]);

    const history: Message[] = [
      ...input.messages,
      first.message,
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: first.message.content.find((c) => c.type === 'tool-call')!.toolCallId, toolName: 'charge_card', output: 'ok' }] },
    ];
    await callAnthropic({ ...input, messages: history }, options());

    expect(server.requests.map((request) => request.errors)).toEqual([[], []]);
    const sentBack = server.requests[1]!.body.messages[1].content as Json[];
    for (const block of issued.filter((candidate) => serverBlockTypes.has(candidate.type))) {
      expect(sentBack.some((candidate) => JSON.stringify(candidate) === JSON.stringify(block))).toBe(true);
    }
    const cited = issued.find((block) => block.type === 'text');
    expect(sentBack.find((block) => block.type === 'text').citations ?? null).toEqual(cited.citations);
    if (name === 'code_execution') expect(server.requests[1]!.body.container).toBe(server.requests[0]!.reply.container.id);
    else expect(server.requests[1]!.body.container).toBeUndefined();
  });

  it('pause_turn: a search paused part-way continues within the step, and its blocks and searches add up', async () => {
    server.script('anthropic', [
      { hosted: [search], text: 'Still looking.', finishReason: 'pause_turn' },
      { hosted: [{ ...search, query: 'card fees 2025' }], text: 'Both years found.', citations: true },
    ]);
    const result = await callAnthropic(stepInput([{ role: 'user', content: 'Fees?' }], { stream, providerTools: [{ type: 'web_search' }] }), options());

    expect(server.requests.map((request) => request.errors)).toEqual([[], []]);
    const parts = result.message.content.filter((part) => part.type === 'provider-tool');
    expect(parts).toHaveLength(2);
    expect(result.usage.webSearchRequests).toBe(2);
    // The paused content went back as the final assistant message, blocks unchanged.
    expect(JSON.stringify(server.requests[1]!.body.messages.at(-1).content.slice(0, 2))).toBe(JSON.stringify(server.requests[0]!.reply.content.slice(0, 2)));
    const price = priceOf(DEFAULT_PRICES, { provider: 'anthropic', model: 'claude-sonnet-4-6' });
    expect(costOf(price, result.usage)! - costOf(price, { ...result.usage, webSearchRequests: 0 })!).toBeCloseTo(0.02, 8);
  });
});

describe('the fake refuses server tool blocks as the API does', () => {
  async function issuedMessage(): Promise<{ message: AssistantMessage; input: ModelStepInput }> {
    server.script('anthropic', [{ hosted: [search], text: 'Found it.', citations: true }]);
    const input = stepInput([{ role: 'user', content: 'Fees?' }], { stream: false, providerTools: [{ type: 'web_search' }] });
    const { message } = await callAnthropic(input, options());
    return { message, input };
  }

  function requestWith(input: ModelStepInput, message: AssistantMessage): Json {
    return convertToAnthropicRequest({ ...input, messages: [...input.messages, message, { role: 'user', content: 'And now?' }] });
  }

  async function refusal(body: Json): Promise<string> {
    const response = await globalThis.fetch(`${server.anthropicBaseURL}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    return ((await response.json()) as Json).error.message;
  }

  it('a server_tool_use without its result block', async () => {
    const { message, input } = await issuedMessage();
    const body = requestWith(input, message);
    const blocks = body.messages[1].content as Json[];
    body.messages[1].content = blocks.filter((block) => block.type !== 'web_search_tool_result');
    expect(await refusal(body)).toMatch(/messages\.1: `web_search` tool use with id `srvtoolu_\w+` was found without a corresponding `web_search_tool_result` block/);
  });

  it('a result block before its server_tool_use', async () => {
    const { message, input } = await issuedMessage();
    const body = requestWith(input, message);
    const [use, result, ...rest] = body.messages[1].content as Json[];
    body.messages[1].content = [result, use, ...rest];
    expect(await refusal(body)).toMatch(/unexpected `tool_use_id` found in `web_search_tool_result` blocks/);
  });

  it('changed encrypted content, and a changed citation', async () => {
    const { message, input } = await issuedMessage();
    const body = requestWith(input, message);
    const blocks = body.messages[1].content as Json[];
    blocks[1].content[0].encrypted_content = `${blocks[1].content[0].encrypted_content.slice(0, -4)}AAAA`;
    blocks[2].citations[0].cited_text = 'Something else.';
    const text = await refusal(body);
    expect(text).toMatch(/Invalid `encrypted_content` in `web_search_result` block/);
    expect(text).toMatch(/Invalid `encrypted_index` in `web_search_result_location` citation/);
  });

  it('code execution continued without its container', async () => {
    server.script('anthropic', [{ hosted: [run], text: 'Ran it.' }]);
    const input = stepInput([{ role: 'user', content: 'Run it.' }], { stream: false, providerTools: [{ type: 'code_execution' }] });
    const { message } = await callAnthropic(input, options());
    const body = requestWith(input, message);
    expect(body.container).toBe(server.requests[0]!.reply.container.id);
    delete body.container;
    expect(await refusal(body)).toMatch(/container: the code execution in this conversation ran in container `container_\w+`/);
  });
});
