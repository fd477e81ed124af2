/**
 * OpenAI's hosted tools in the `openai-responses` provider, against the real `openai` SDK and
 * the strict fake: remote MCP servers resolved from the worker's settings (never the turn's), the
 * fake's pairing of `mcp_approval_request` / `mcp_approval_response`, and hosted items checked
 * when sent back.
 */
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callOpenAIResponses, convertToResponsesRequest } from '../../activities/providers/openai-responses.js';
import { checkedRemoteMcpServers } from '../../activities/providers/remote-mcp-servers.js';
import { modelSettingsProblem } from '../../workflows/turn/model-settings.js';
import type { Message, ModelSettings, ModelStepInput } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';

let server: FakeProviderServer;
beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => server?.close());
beforeEach(() => server.reset());

const options = () => ({ apiKey: 'sk-test', baseURL: server.openaiBaseURL });
const servers = { docs: { url: 'https://mcp.example.test/mcp', headersEnv: { Authorization: 'HOSTED_UNIT_MCP_AUTH' } } };
const mcpModel: ModelSettings = { provider: 'openai-responses', model: 'gpt-4.1-mini', providerTools: [{ type: 'mcp', server_label: 'docs', require_approval: 'always' }] };
const step = (messages: Message[], model = mcpModel): ModelStepInput => ({ model, messages, tools: [] });

describe('remote MCP servers are the worker’s', () => {
  it('a turn naming an unknown server, or a header whose variable is unset, fails without retries', () => {
    expect(() => convertToResponsesRequest(step([{ role: 'user', content: 'hi' }]), {})).toThrow(ApplicationFailure);
    delete process.env.HOSTED_UNIT_MCP_AUTH;
    expect(() => convertToResponsesRequest(step([{ role: 'user', content: 'hi' }]), servers)).toThrow(/set HOSTED_UNIT_MCP_AUTH/);
    process.env.HOSTED_UNIT_MCP_AUTH = 'Bearer unit';
    expect(convertToResponsesRequest(step([{ role: 'user', content: 'hi' }]), servers).tools).toEqual([
      { type: 'mcp', server_label: 'docs', require_approval: 'always', server_url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer unit' } },
    ]);
  });

  it('a turn may not give a server its URL or headers; a worker’s settings are checked when it starts', () => {
    expect(modelSettingsProblem({ ...mcpModel, providerTools: [{ type: 'mcp', server_label: 'docs', headers: { Authorization: 'x' } }] })).toMatch(/never a turn's/);
    expect(modelSettingsProblem({ ...mcpModel, providerTools: [{ type: 'mcp' }] })).toMatch(/server_label/);
    expect(() => checkedRemoteMcpServers({ docs: { url: 'ftp://x' } }, 'test')).toThrow(TypeError);
    expect(() => checkedRemoteMcpServers({ docs: { url: 'https://x', headersEnv: { Authorization: 'not a name' } } }, 'test')).toThrow(TypeError);
  });
});

describe('the fake pairs approval requests and responses', () => {
  it('an approval request becomes a call of openai_mcp_approval; sent back with its decision, the step is accepted; unanswered or forged, refused', async () => {
    process.env.HOSTED_UNIT_MCP_AUTH = 'Bearer unit';
    server.script('openai-responses', [{ hostedItems: [{ type: 'mcp_approval_request', server_label: 'docs', name: 'publish', arguments: { page: 'a' } }] }, { text: 'done' }]);
    const user: Message = { role: 'user', content: 'publish a' };
    const first = await callOpenAIResponses(step([user]), options(), servers);
    const [call] = first.message.content;
    expect(call).toMatchObject({ type: 'tool-call', toolName: 'openai_mcp_approval', input: { server_label: 'docs', name: 'publish', arguments: { page: 'a' } } });
    expect(first.finishReason).toBe('tool-calls');
    if (call.type !== 'tool-call') throw new Error('not a call');

    // Unanswered: the request alone goes back, and the fake refuses it.
    await expect(callOpenAIResponses(step([user, first.message]), { ...options() }, servers)).rejects.toThrow(/No approval response found for MCP approval request/);
    // A response to a request that is not there (sent with the SDK directly: turnpike never sends one).
    const sdk = new OpenAI(options());
    await expect(
      sdk.responses.create({ model: 'gpt-4.1-mini', store: false, input: [{ role: 'user', content: 'hi' }, { type: 'mcp_approval_response', approval_request_id: 'mcpr_forged', approve: true }] }),
    ).rejects.toThrow(/No approval request found for approval response with approval_request_id mcpr_forged/);

    const answered = await callOpenAIResponses(
      step([user, first.message, { role: 'tool', content: [{ type: 'tool-result', toolCallId: call.toolCallId, toolName: 'openai_mcp_approval', output: 'Approved.' }] }]),
      options(),
      servers,
    );
    expect(answered.message.content).toEqual([{ type: 'text', text: 'done' }]);
    const sent = server.requests.at(-1)!.body.input;
    expect(sent.slice(1)).toEqual([
      { id: call.toolCallId, type: 'mcp_approval_request', arguments: '{"page":"a"}', name: 'publish', server_label: 'docs' },
      { type: 'mcp_approval_response', approval_request_id: call.toolCallId, approve: true },
    ]);
  });

  it('a hosted item changed on its way back, or referenced by id with store: false, is refused', async () => {
    const model: ModelSettings = { provider: 'openai-responses', model: 'gpt-4.1-mini', providerTools: [{ type: 'web_search' }] };
    server.script('openai-responses', [{ hostedItems: [{ type: 'web_search', query: 'q', sources: ['https://example.test/'] }], text: 'found' }]);
    const user: Message = { role: 'user', content: 'search' };
    const first = await callOpenAIResponses(step([user], model), options());
    const part = first.message.content.find((candidate) => candidate.type === 'provider-tool');
    expect(part).toMatchObject({ toolName: 'web_search', sources: [{ url: 'https://example.test/' }] });
    if (part?.type !== 'provider-tool') throw new Error('no provider-tool part');
    const changed = { ...part, raw: [{ ...(part.raw[0] as object), status: 'failed' }] };
    await expect(callOpenAIResponses(step([user, { role: 'assistant', content: [changed, { type: 'text', text: 'found' }] }, { role: 'user', content: 'more' }], model), options())).rejects.toThrow(
      /differs from the web_search_call item/,
    );
    const reference = { ...part, raw: [{ type: 'item_reference', id: part.toolCallId }] };
    await expect(callOpenAIResponses(step([user, { role: 'assistant', content: [reference, { type: 'text', text: 'found' }] }, { role: 'user', content: 'more' }], model), options())).rejects.toThrow(
      /Items are not persisted when `store` is set to false/,
    );
  });
});
