/**
 * Claude's server tools (`ModelSettings.providerTools`) in whole turns on the real dev server, the
 * worker in a child process and the real SDK against the strict fake Anthropic: for web search,
 * web fetch and code execution, a step that uses the hosted tool and also calls `charge_card`
 * parks on its approval; the worker is killed (SIGKILL) while it is parked and another starts; the
 * call is approved and the turn completes. The next request carries every server tool block back
 * byte-exact (the fake refuses anything else), with the citations and the container; the turn's
 * records, stream and `useChat` chunks show the hosted call; usage and cost count the searches.
 * A hand-over and the next turn of a conversation carry the blocks the same way, and a turn that
 * offers a hosted tool to a provider without it fails at once.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { ApplicationFailure, Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { costOf, DEFAULT_PRICES, priceOf } from '../../activities/prices.js';
import type { UiMessageChunk } from '../../api/ui-message-chunk.js';
import { UiMessageChunkMapper } from '../../api/ui-message-chunks.js';
import { TurnpikeClient } from '../../client/index.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { INVALID_TURN_INPUT } from '../../workflows/messages/rejection-types.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput, AgentTurnResult, ModelSettings, ProviderToolSpec } from '../../workflows/types/index.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { startWorkerProcess, temporaryDirectory, type WorkerProcess } from '../chaos/chaos-support.js';
import type { Json, ScriptedHostedCall } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { waitForState } from '../support/turnpike-harness.js';

const MODEL = 'claude-sonnet-4-6';
const SERVER_BLOCKS = new Set(['server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'bash_code_execution_tool_result']);

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let connection: Connection;
let client: Client;
let turnpike: TurnpikeClient;
let worker: WorkerProcess | undefined;
let env: Record<string, string>;
const taskQueue = `hosted-tools-${randomUUID()}`;
const records = temporaryDirectory('turnpike-hosted-');

beforeAll(async () => {
  fake = await useFakeProviders();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
  turnpike = new TurnpikeClient({ client, taskQueue });
  env = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TURNPIKE_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    CHAOS_RECORDS_DIR: records,
  };
  worker = await startWorkerProcess(env);
}, 120_000);

afterAll(async () => {
  await worker?.kill();
  await connection?.close();
  await fake?.restore();
  rmSync(records, { recursive: true, force: true });
});

beforeEach(() => fake.reset());

const search: ScriptedHostedCall = { tool: 'web_search', query: 'card fee 2026', results: [{ url: 'https://fees.example/2026', title: 'Card fees 2026' }, { url: 'https://fees.example/faq', title: 'Fee FAQ' }] };
const fetchPage: ScriptedHostedCall = { tool: 'web_fetch', url: 'https://fees.example/2026', title: 'Card fees 2026', text: 'The card fee is 2%.' };
const runCode: ScriptedHostedCall = { tool: 'code_execution', command: 'python -c "print(50 * 1.02)"', stdout: '51.0\n' };

const model = (providerTools: ProviderToolSpec[]): ModelSettings => ({ provider: 'anthropic', model: MODEL, maxTokens: 1024, providerTools });

async function startTurn(input: Omit<AgentTurnInput, 'messages'> & { text: string }): Promise<WorkflowHandle<typeof agentTurn>> {
  const { text, ...rest } = input;
  return client.workflow.start<typeof agentTurn>('agentTurn', { taskQueue, workflowId: `hosted-${randomUUID()}`, args: [{ ...rest, messages: [{ role: 'user', content: text }] }] });
}

/** Waits for the turn's one parked approval, kills the worker with SIGKILL, starts another, approves. */
async function approveAcrossKill(workflowId: string): Promise<void> {
  const { pending } = await waitForState(client.workflow.getHandle(workflowId), (state) => state.pending.length === 1, 120_000);
  expect(pending[0]).toMatchObject({ kind: 'approval', toolName: 'charge_card' });
  await worker!.kill();
  worker = await startWorkerProcess(env);
  await turnpike.approveToolCall(workflowId, { approvalId: pending[0]!.approvalId!, approved: true, approver: 'alice' });
}

/** The server tool blocks the fake issued in reply to `request`, and its text blocks. */
function issuedBy(request: number): { blocks: Json[]; text: Json; container?: string } {
  const reply = fake.requests[request]!.reply;
  return { blocks: reply.content.filter((block: Json) => SERVER_BLOCKS.has(block.type)), text: reply.content.find((block: Json) => block.type === 'text'), container: reply.container?.id };
}

/** Every issued block appears, byte for byte, among the blocks the request sent back. */
function expectCarriedBack(request: number, issued: ReturnType<typeof issuedBy>): void {
  const sent: string[] = fake.requests[request]!.body.messages.flatMap((message: Json) => (Array.isArray(message.content) ? message.content : [])).map((block: Json) => JSON.stringify(block));
  for (const block of issued.blocks) expect(sent).toContain(JSON.stringify(block));
  if (issued.text.citations) {
    const cited = fake.requests[request]!.body.messages.flatMap((message: Json) => (Array.isArray(message.content) ? message.content : [])).find((block: Json) => block.type === 'text' && block.citations);
    expect(JSON.stringify(cited.citations)).toBe(JSON.stringify(issued.text.citations));
  }
  if (issued.container) expect(fake.requests[request]!.body.container).toBe(issued.container);
}

/** The turn's events as `useChat` gets them. */
async function chunksOf(workflowId: string): Promise<{ events: TurnEvent[]; chunks: UiMessageChunk[] }> {
  const events: TurnEvent[] = [];
  for await (const record of turnpike.turnEvents(workflowId)) {
    events.push(record.event);
    if (record.event.type === 'turn-finished') break;
  }
  const mapper = new UiMessageChunkMapper();
  const chunks: UiMessageChunk[] = [];
  for (const event of events) chunks.push(...(await mapper.map(event)));
  return { events, chunks };
}

describe.each([
  ['web_search', search, [{ type: 'web_search', max_uses: 3 }], ['https://fees.example/2026', 'https://fees.example/faq']],
  ['web_fetch', fetchPage, [{ type: 'web_fetch', max_uses: 2 }], ['https://fees.example/2026']],
  ['code_execution', runCode, [{ type: 'code_execution' }], []],
] as const)('a turn that uses %s', (name, call, providerTools, urls) => {
  it('parks on another tool in the same step, survives a worker SIGKILL, is approved, completes, and carries every block back byte-exact', { timeout: 300_000 }, async () => {
    fake.script('anthropic', [
      { hosted: [call], text: 'The fee comes to 51.', ...(name === 'web_search' ? { citations: true as const } : {}), toolCalls: [{ name: 'charge_card', input: { amount: 51 } }] },
      { text: 'Charged 51.' },
    ]);
    const handle = await startTurn({ model: model([...providerTools]), text: 'Charge the card fee on 50.', tools: ['charge_card'] });

    await approveAcrossKill(handle.workflowId);
    const result = (await handle.result()) as AgentTurnResult;

    expect(result).toMatchObject({ status: 'completed', text: 'Charged 51.' });
    expect(fake.requests.map((request) => request.errors)).toEqual([[], []]);
    const issued = issuedBy(0);
    expect(issued.blocks).toHaveLength(2);
    expectCarriedBack(1, issued);
    const offered = fake.requests[0]!.body.tools.map((tool: Json) => tool.type ?? 'custom');
    expect(offered).toContain({ web_search: 'web_search_20250305', web_fetch: 'web_fetch_20250910', code_execution: 'code_execution_20250825' }[name]);

    const hosted = result.toolCalls.find((record) => record.executedBy === 'provider');
    expect(hosted).toMatchObject({ toolCallId: issued.blocks[0].id, toolName: name, outcome: 'executed', isError: false });
    expect(result.toolCalls.find((record) => record.toolName === 'charge_card')).toMatchObject({ outcome: 'approved', output: { charged: 51 } });

    const { events, chunks } = await chunksOf(handle.workflowId);
    expect(events.find((event) => event.type === 'provider-tool')).toMatchObject({ toolCallId: issued.blocks[0].id, toolName: name, step: 1 });
    expect(chunks).toContainEqual(expect.objectContaining({ type: 'tool-input-available', toolCallId: issued.blocks[0].id, toolName: name, providerExecuted: true }));
    expect(chunks).toContainEqual(expect.objectContaining({ type: 'tool-output-available', toolCallId: issued.blocks[0].id, providerExecuted: true }));
    expect(chunks.filter((chunk) => chunk.type === 'source-url').map((chunk) => (chunk as { url: string }).url)).toEqual(urls);

    expect(result.usage.webSearchRequests).toBe(name === 'web_search' ? 1 : undefined);
    expect(result.usage.webFetchRequests).toBe(name === 'web_fetch' ? 1 : undefined);
    const price = priceOf(DEFAULT_PRICES, { provider: 'anthropic', model: MODEL });
    expect(result.usage.costUsd).toBeCloseTo(costOf(price, result.usage)!, 7);
    if (name === 'web_search') expect(result.usage.costUsd! - costOf(price, { ...result.usage, webSearchRequests: 0 })!).toBeCloseTo(0.01, 7);
  });
});

describe('server tool blocks over a hand-over and a conversation', () => {
  it('a turn that hands over to a new run after the parked step carries the blocks into the next run', { timeout: 400_000 }, async () => {
    const sync = (step: number) => ({ text: `Syncing, step ${step}.`, toolCalls: [1, 2, 3].map((n) => ({ name: 'slow_sync', input: { n: step * 10 + n } })) });
    fake.script('anthropic', [
      { hosted: [search], text: 'Two sources agree.', citations: true, toolCalls: [{ name: 'charge_card', input: { amount: 51 } }] },
      ...[2, 3, 4, 5, 6].map(sync),
      { text: 'All charged and synced.' },
    ]);
    // 100 events (the least a turn takes): reached after a few steps, at whose boundary the turn hands over.
    const handle = await startTurn({ model: model([{ type: 'web_search' }]), text: 'Charge the fee, then sync.', tools: ['charge_card', 'slow_sync'], historyLimit: { events: 100 } });
    const firstRunId = (await handle.describe()).runId;

    await approveAcrossKill(handle.workflowId);
    const result = (await handle.result()) as AgentTurnResult;

    expect(result).toMatchObject({ status: 'completed', text: 'All charged and synced.', steps: 7 });
    expect((await handle.describe()).runId).not.toBe(firstRunId);
    expect(fake.requests.map((request) => request.errors)).toEqual(Array.from({ length: 7 }, () => []));
    const issued = issuedBy(0);
    for (let request = 1; request < 7; request++) expectCarriedBack(request, issued);
    expect(result.toolCalls.filter((record) => record.executedBy === 'provider')).toMatchObject([{ toolName: 'web_search', toolCallId: issued.blocks[0].id }]);
    expect(result.usage.webSearchRequests).toBe(1);
  });

  it("the conversation's next turn sends the first turn's blocks back byte-exact", { timeout: 300_000 }, async () => {
    fake.script('anthropic', [
      { hosted: [search, fetchPage], text: 'Found the fee.', citations: true, toolCalls: [{ name: 'charge_card', input: { amount: 51 } }] },
      { text: 'Charged 51.' },
      { text: 'It was 2% of 50.' },
    ]);
    const conversationId = `hosted-conversation-${randomUUID()}`;
    const first = await turnpike.sendMessage({ conversationId, text: 'Charge the fee.', conversation: { model: model([{ type: 'web_search' }, { type: 'web_fetch' }]), tools: ['charge_card'] } });
    await approveAcrossKill(first.turnWorkflowId);
    expect(await turnpike.turnResult(first.turnWorkflowId)).toMatchObject({ status: 'completed', text: 'Charged 51.' });

    const second = await turnpike.sendMessage({ conversationId, text: 'How was it computed?' });
    expect(await turnpike.turnResult(second.turnWorkflowId)).toMatchObject({ status: 'completed', text: 'It was 2% of 50.' });

    expect(fake.requests.map((request) => request.errors)).toEqual([[], [], []]);
    expect(issuedBy(0).blocks).toHaveLength(4);
    expectCarriedBack(2, issuedBy(0));
    await client.workflow.getHandle(conversationId).terminate('test done');
  });
});

describe('a step cut off by max_tokens', () => {
  it('records a server tool cut off before its result as a failed call, keeps the step, and the next turn is valid input', { timeout: 120_000 }, async () => {
    fake.script('anthropic', [{ hosted: [{ ...search, unanswered: true }], finishReason: 'max_tokens' }, { text: 'The fee is 2%.' }]);
    const conversationId = `hosted-cut-off-${randomUUID()}`;
    const first = await turnpike.sendMessage({ conversationId, text: 'Find the card fee.', conversation: { model: model([{ type: 'web_search' }]) } });
    const result = await turnpike.turnResult(first.turnWorkflowId);

    const issued: Json[] = fake.requests[0]!.reply.content;
    expect(issued.map((block) => block.type)).toEqual(['server_tool_use']);
    expect(result).toMatchObject({ status: 'max-tokens', text: '', cutOff: { step: 1, finishReason: 'length', providerFinishReason: 'max_tokens' } });
    expect(result.usage.webSearchRequests).toBe(1);
    const failed = { toolCallId: issued[0].id, toolName: 'web_search', input: { query: 'card fee 2026' }, output: 'the response ended before the tool returned a result', isError: true };
    expect(result.toolCalls).toEqual([{ ...failed, outcome: 'error', executedBy: 'provider' }]);
    expect(result.messages).toEqual([{ role: 'assistant', content: [{ type: 'provider-tool', provider: 'anthropic', ...failed, raw: [] }] }]);
    const { events } = await chunksOf(first.turnWorkflowId);
    expect(events.map((event) => event.type).filter((type) => ['step-finished', 'provider-tool', 'turn-finished'].includes(type))).toEqual(['step-finished', 'provider-tool', 'turn-finished']);
    expect(events.find((event) => event.type === 'provider-tool')).toEqual({ type: 'provider-tool', step: 1, ...failed });

    // The kept step goes back without its server_tool_use, which the API refuses without its result.
    const second = await turnpike.sendMessage({ conversationId, text: 'Try again.' });
    expect(await turnpike.turnResult(second.turnWorkflowId)).toMatchObject({ status: 'completed', text: 'The fee is 2%.' });
    expect(fake.requests.map((request) => request.errors)).toEqual([[], []]);
    expect(JSON.stringify(fake.requests[1]!.body.messages)).not.toContain(issued[0].id);
    await client.workflow.getHandle(conversationId).terminate('test done');
  });

  it('records and shows a search that completed before the text was cut off', { timeout: 120_000 }, async () => {
    fake.script('anthropic', [{ hosted: [search], text: 'Two sources say the fee', finishReason: 'max_tokens' }]);
    const handle = await startTurn({ model: model([{ type: 'web_search' }]), text: 'Find the card fee.' });
    const result = (await handle.result()) as AgentTurnResult;

    const issued = issuedBy(0);
    expect(result).toMatchObject({ status: 'max-tokens', text: 'Two sources say the fee', cutOff: { step: 1, finishReason: 'length' } });
    expect(result.toolCalls).toMatchObject([{ toolCallId: issued.blocks[0].id, toolName: 'web_search', outcome: 'executed', isError: false, executedBy: 'provider' }]);
    expect(result.usage.webSearchRequests).toBe(1);
    const { events, chunks } = await chunksOf(handle.workflowId);
    expect(events.filter((event) => event.type === 'provider-tool')).toMatchObject([{ step: 1, toolCallId: issued.blocks[0].id, toolName: 'web_search', isError: false }]);
    expect(chunks.filter((chunk) => chunk.type === 'source-url').map((chunk) => (chunk as { url: string }).url)).toEqual(['https://fees.example/2026', 'https://fees.example/faq']);
  });
});

describe('a hosted tool offered to a provider without it', () => {
  it.each([
    [{ provider: 'openai', model: 'gpt-4.1-mini', providerTools: [{ type: 'web_search' }] }, 'provider "openai" runs no hosted tools'],
    [{ provider: 'anthropic', model: MODEL, providerTools: [{ type: 'file_search' }] }, '"file_search" is not a hosted tool of anthropic'],
  ])('fails the turn at once with InvalidTurnInput (%j)', { timeout: 120_000 }, async (settings, message) => {
    const handle = await startTurn({ model: settings as ModelSettings, text: 'Search the web.' });

    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe(INVALID_TURN_INPUT);
    expect(cause.message).toContain(message);
    expect(fake.requests).toEqual([]);
  });
});
