/**
 * OpenAI's hosted tools on the Responses API (provider `openai-responses`), through the real SDK,
 * against the strict fake (test/fake-provider/openai-hosted-tools.ts), on the real dev server,
 * with the worker in a child process:
 *
 * - each hosted tool (`web_search`, `file_search`, `code_interpreter`, remote `mcp`) runs in a step
 *   that also calls a tool needing approval; the worker is killed (SIGKILL) while the turn is
 *   parked; a new worker takes the approval; the next request carries the hosted items back byte
 *   for byte, the turn records them (`executedBy: 'provider'`), and its stream and `useChat`
 *   chunks show them;
 * - a remote MCP server with `require_approval: 'always'` answers with `mcp_approval_request`,
 *   which parks like any approval: approved, denied (the model is told why) or expired (denied),
 *   each audited, the request sent back verbatim with its `mcp_approval_response`.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { costOf, DEFAULT_PRICES, priceOf } from '../../activities/prices.js';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import type { UiMessageChunk } from '../../api/ui-message-chunk.js';
import { UiMessageChunkMapper } from '../../api/ui-message-chunks.js';
import { noteStarted, saveStarted } from '../support/history-recorder.js';
import { TurnpikeClient } from '../../client/index.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput, ModelSettings, ProviderToolPart, ProviderToolSpec, Usage } from '../../workflows/types/index.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import type { ScriptedHostedItem } from '../fake-provider/openai-hosted-tools.js';
import type { Json } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { waitForListed, waitForPending, waitForState } from '../support/turnpike-harness.js';

const MCP_URL = 'https://mcp.example.test/mcp';
const MCP_SECRET = 'Bearer mcp-test-SECRET-0b7e';

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let connection: Connection;
let client: Client;
let turnpike: TurnpikeClient;
const taskQueue = `hosted-tools-${randomUUID()}`;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  fake = await useFakeProviders();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
  turnpike = new TurnpikeClient({ client, taskQueue });
  await startWorker();
}, 120_000);

afterAll(async () => {
  await saveStarted();
  for (const worker of workers) await worker.kill();
  await connection?.close();
  await fake?.restore();
});

beforeEach(() => fake.reset());

/** A worker process on the test's task queue; the header's value only in its environment. */
async function startWorker(): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(
    {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: taskQueue,
      WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      MCP_TEST_AUTH: MCP_SECRET,
      TEST_REMOTE_MCP_SERVERS: JSON.stringify({ docs: { url: MCP_URL, headersEnv: { Authorization: 'MCP_TEST_AUTH' } } }),
    },
    'test/support/hosted-tools-worker-process.ts',
  );
  workers.push(worker);
  return worker;
}

/** SIGKILL, then a new worker process: the parked turn resumes from its history alone. */
async function killAndReplaceWorker(): Promise<void> {
  await Promise.all(workers.splice(0).map((worker) => worker.kill()));
  await startWorker();
}

const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };

function startTurn(providerTools: ProviderToolSpec[], text: string, extra: Partial<AgentTurnInput> = {}): Promise<WorkflowHandle<typeof agentTurn>> {
  const model: ModelSettings = { provider: 'openai-responses', model: 'gpt-4.1-mini', providerTools };
  const started = client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue,
    workflowId: `hosted-${randomUUID()}`,
    args: [{ model, messages: [{ role: 'user', content: text }], tools: ['release_gate'], modelCallOptions: fastRetries, ...extra }],
  });
  // Recorded for the replay sets (npm run record-histories).
  return started.then((handle) => (noteStarted(handle), handle));
}

/** The valid requests the fake answered, in order. */
function answered(): Json[] {
  return fake.requests.filter((request) => request.provider === 'openai-responses' && request.status === 200).map((request) => request.body);
}

async function eventsOf(turnId: string): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const record of turnpike.turnEvents(turnId)) events.push(record.event);
  return events;
}

async function chunksOf(events: TurnEvent[]): Promise<UiMessageChunk[]> {
  const mapper = new UiMessageChunkMapper();
  const chunks: UiMessageChunk[] = [];
  for (const event of events) chunks.push(...(await mapper.map(event)));
  return chunks;
}

interface HostedCase {
  name: string;
  tool: ProviderToolSpec;
  items: ScriptedHostedItem[];
  /** The hosted tool's entry as the request must offer it. */
  offered: Json;
  include?: string;
  citations?: Array<{ url: string; title: string }>;
  /** What OpenAI bills the tool for, and its price in USD (docs/budgets.md). */
  billed?: { usage: Partial<Usage>; usd: number };
}

const CASES: HostedCase[] = [
  {
    name: 'web_search',
    tool: { type: 'web_search' },
    items: [{ type: 'web_search', query: 'turnpike release notes', sources: ['https://example.test/notes', 'https://example.test/blog'] }],
    offered: { type: 'web_search' },
    include: 'web_search_call.action.sources',
    citations: [{ url: 'https://example.test/notes', title: 'Release notes' }],
    billed: { usage: { webSearchRequests: 1 }, usd: 0.01 },
  },
  {
    name: 'file_search',
    tool: { type: 'file_search', vector_store_ids: ['vs_release_docs'] },
    items: [{ type: 'file_search', queries: ['release policy'], results: [{ file_id: 'file-Rel1', filename: 'policy.pdf', score: 0.93, text: 'Every release needs the gate.' }] }],
    offered: { type: 'file_search', vector_store_ids: ['vs_release_docs'] },
    include: 'file_search_call.results',
    billed: { usage: { fileSearchRequests: 1 }, usd: 0.0025 },
  },
  {
    name: 'code_interpreter',
    tool: { type: 'code_interpreter' },
    items: [{ type: 'code_interpreter', code: 'print(6 * 7)', logs: '42' }],
    offered: { type: 'code_interpreter', container: { type: 'auto' } },
    include: 'code_interpreter_call.outputs',
    billed: { usage: { codeInterpreterContainers: 1 }, usd: 0.03 },
  },
  {
    name: 'mcp',
    tool: { type: 'mcp', server_label: 'docs', require_approval: 'never' },
    items: [
      { type: 'mcp_list_tools', server_label: 'docs', tools: [{ name: 'read_page' }] },
      { type: 'mcp_call', server_label: 'docs', name: 'read_page', arguments: { page: 'releases' }, output: 'Release 1.4: the gate is required.' },
    ],
    offered: { type: 'mcp', server_label: 'docs', require_approval: 'never', server_url: MCP_URL, headers: { Authorization: MCP_SECRET } },
  },
];

describe('OpenAI hosted tools', () => {
  it.each(CASES)(
    '$name: parks on another tool in the same step, survives a SIGKILL, and the next request carries its items back byte-exact',
    async ({ name, tool, items, offered, include, citations, billed }) => {
      fake.script('openai-responses', [
        { hostedItems: items, toolCalls: [{ name: 'release_gate', input: { version: '1.4' } }], ...(citations ? { text: 'Checking first.', urlCitations: citations } : {}) },
        { text: 'Released 1.4.' },
      ]);
      const handle = await startTurn([tool], `Use ${name}, then release 1.4.`);
      const [pending] = await waitForPending(handle, 1);
      expect(pending.toolName).toBe('release_gate');

      await killAndReplaceWorker();
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
      const result = await handle.result();
      expect(result.status).toBe('completed');
      expect(result.text).toBe('Released 1.4.');

      const [first, second] = answered();
      expect(first.store).toBe(false);
      expect(first.tools).toContainEqual(offered);
      if (include) expect(first.include).toContain(include);

      // The provider's items, as the turn kept them, went back in the next request byte for byte.
      const parts = result.messages.flatMap((message) => (message.role === 'assistant' ? message.content : [])).filter((part): part is ProviderToolPart => part.type === 'provider-tool');
      expect(parts.map((part) => part.toolName)).toEqual(items.map((item) => (item.type === 'mcp_list_tools' ? 'mcp_list_tools' : item.type === 'mcp_call' ? 'mcp' : item.type)));
      const raw = parts.flatMap((part) => part.raw.map((item) => JSON.stringify(item)));
      const sentBack = second.input.filter((item: Json) => raw.some((kept) => JSON.parse(kept).id === item.id)).map((item: Json) => JSON.stringify(item));
      expect(sentBack).toEqual(raw);
      expect(fake.requests.filter((request) => request.provider === 'openai-responses' && request.errors.length > 0)).toEqual([]);

      // Recorded as calls the provider ran, and shown on the stream and to useChat.
      const records = result.toolCalls.filter((record) => record.executedBy === 'provider');
      expect(records.map((record) => record.toolName)).toEqual(parts.map((part) => part.toolName));
      expect(records.every((record) => record.outcome === 'executed')).toBe(true);
      const events = await eventsOf(handle.workflowId);
      const shown = events.filter((event): event is Extract<TurnEvent, { type: 'provider-tool' }> => event.type === 'provider-tool');
      expect(shown.map((event) => event.toolCallId)).toEqual(parts.map((part) => part.toolCallId));
      const chunks = await chunksOf(events);
      for (const part of parts) {
        expect(chunks).toContainEqual(expect.objectContaining({ type: 'tool-input-available', toolCallId: part.toolCallId, providerExecuted: true }));
      }
      if (name === 'web_search') {
        const urls = chunks.filter((chunk) => chunk.type === 'source-url').map((chunk) => (chunk as { url: string }).url);
        expect(urls).toEqual(['https://example.test/notes', 'https://example.test/blog']);
      }
      if (name === 'code_interpreter') expect(parts[0].output).toMatchObject({ container_id: expect.stringMatching(/^cntr_/), outputs: [{ type: 'logs', logs: '42' }] });

      // What the tool is billed for is in the turn's usage, and its price in the turn's cost.
      const tokensOnly = costOf(priceOf(DEFAULT_PRICES, { provider: 'openai-responses', model: 'gpt-4.1-mini' }), { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, cachedInputTokens: result.usage.cachedInputTokens })!;
      if (billed) {
        expect(result.usage).toMatchObject(billed.usage);
        expect(result.usage.costUsd).toBeCloseTo(tokensOnly + billed.usd, 8);
      } else {
        expect(result.usage.costUsd).toBeCloseTo(tokensOnly, 8);
      }
    },
    180_000,
  );

  it("a cost budget counts a step's web searches and containers: their price alone takes the turn over its limit", async () => {
    // 1,000 + 100 tokens of gpt-4.1-mini cost $0.00056, under the $0.005 limit; two searches and a
    // container add $0.05, over it. A cost limit is checked before each model step: counted by
    // tokens only, the approved turn would call the model again and complete.
    fake.script('openai-responses', [
      {
        hostedItems: [
          { type: 'web_search', query: 'turnpike 1.4 notes', sources: ['https://example.test/notes'] },
          { type: 'web_search', query: 'turnpike 1.4 blog', sources: ['https://example.test/blog'] },
          { type: 'code_interpreter', code: 'print(1 + 1)', logs: '2' },
        ],
        toolCalls: [{ name: 'release_gate', input: { version: '1.4' } }],
        usage: { inputTokens: 1_000, outputTokens: 100 },
      },
      { text: 'Released 1.4.' },
    ]);
    const handle = await startTurn([{ type: 'web_search' }, { type: 'code_interpreter', container: { type: 'auto' } }], 'Release 1.4 if the notes are out.', { budget: { costUsd: 0.005 } });
    const [gate] = await waitForPending(handle, 1);
    expect(gate).toMatchObject({ kind: 'approval', toolName: 'release_gate' });
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: gate.approvalId!, approved: true, approver: 'alice' }] });

    const budget = (await waitForState(handle, (state) => state.pending.some((pending) => pending.kind === 'budget'))).pending.find((pending) => pending.kind === 'budget');
    const input = budget?.input as { exceeded: string[]; spent: { costUsd?: number } } | undefined;
    expect(input?.exceeded).toEqual(['costUsd']);
    expect(input?.spent.costUsd).toBeCloseTo(0.00056 + 2 * 0.01 + 0.03, 8);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: budget!.approvalId!, approved: false, approver: 'alice' }] });
    const result = await handle.result();
    expect(result.status).toBe('budget-exceeded');
    expect(result.usage).toMatchObject({ inputTokens: 1_000, outputTokens: 100, webSearchRequests: 2, codeInterpreterContainers: 1 });
    expect(result.spend?.costUsd).toBeCloseTo(0.05056, 8);
    expect(answered()).toHaveLength(1);
  }, 180_000);
});

describe('OpenAI remote MCP approval requests', () => {
  const mcp: ProviderToolSpec = { type: 'mcp', server_label: 'docs', require_approval: 'always' };
  const askApproval = (): ScriptedHostedItem[] => [
    { type: 'mcp_list_tools', server_label: 'docs', tools: [{ name: 'publish_page' }] },
    { type: 'mcp_approval_request', server_label: 'docs', name: 'publish_page', arguments: { page: 'releases' } },
  ];

  it('parks the request; approved, the request goes back verbatim with its approval and the provider runs the call', async () => {
    fake.script('openai-responses', [
      { hostedItems: askApproval() },
      { hostedItems: [{ type: 'mcp_call', server_label: 'docs', name: 'publish_page', arguments: { page: 'releases' }, output: 'published' }], text: 'Published the releases page.' },
    ]);
    const handle = await startTurn([mcp], 'Publish the releases page.');
    const [pending] = await waitForPending(handle, 1);
    expect(pending).toMatchObject({ kind: 'approval', toolName: 'openai_mcp_approval', input: { server_label: 'docs', name: 'publish_page', arguments: { page: 'releases' } } });
    const [listed] = await waitForListed(turnpike, handle.workflowId, 1);
    expect(listed).toMatchObject({ approvalId: pending.approvalId, toolName: 'openai_mcp_approval' });

    await killAndReplaceWorker();
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.text).toBe('Published the releases page.');

    const [first, second] = answered();
    const request = second.input.find((item: Json) => item.type === 'mcp_approval_request');
    expect(request.id).toBe(pending.toolCallId);
    const index = second.input.indexOf(request);
    expect(second.input[index + 1]).toEqual({ type: 'mcp_approval_response', approval_request_id: request.id, approve: true });
    expect(first.tools).toContainEqual({ type: 'mcp', server_label: 'docs', require_approval: 'always', server_url: MCP_URL, headers: { Authorization: MCP_SECRET } });
    // No activity ran for it, and the decision is audited.
    expect(result.decisions).toEqual([expect.objectContaining({ approvalId: pending.approvalId, toolName: 'openai_mcp_approval', outcome: 'approved', approver: 'alice', automatic: false })]);
    expect(result.toolCalls).toContainEqual(expect.objectContaining({ toolName: 'openai_mcp_approval', outcome: 'approved' }));
    expect(result.toolCalls).toContainEqual(expect.objectContaining({ toolName: 'mcp', executedBy: 'provider', output: 'published' }));

    // The next turn moves to Claude: OpenAI's request and its decision are not sent there, the rest is.
    fake.script('anthropic', [{ text: 'Nothing else to publish.' }]);
    const next = await client.workflow.start<typeof agentTurn>('agentTurn', {
      taskQueue,
      workflowId: `hosted-next-${randomUUID()}`,
      args: [{ model: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxTokens: 256 }, messages: [{ role: 'user', content: 'Publish the releases page.' }, ...result.messages, { role: 'user', content: 'Anything else?' }], tools: ['release_gate'] }],
    });
    noteStarted(next);
    expect((await next.result()).text).toBe('Nothing else to publish.');
    const claude = fake.requests.filter((sent) => sent.provider === 'anthropic').at(-1)!;
    expect(claude.errors).toEqual([]);
    expect(JSON.stringify(claude.body.messages)).not.toContain('openai_mcp_approval');
    expect(JSON.stringify(claude.body.messages)).toContain('Published the releases page.');
  }, 180_000);

  it('approved from the dashboard in Chromium, the turn completes', async () => {
    fake.script('openai-responses', [
      { hostedItems: askApproval() },
      { hostedItems: [{ type: 'mcp_call', server_label: 'docs', name: 'publish_page', arguments: { page: 'releases' }, output: 'published' }], text: 'Published.' },
    ]);
    const api = await buildApi({ client: turnpike, tokens: parseTokenMap('alice-token:alice') });
    await api.listen({ host: '127.0.0.1', port: 0 });
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const handle = await startTurn([mcp], 'Publish the releases page.');
      const [pending] = await waitForPending(handle, 1);
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(api.server.address() as AddressInfo).port}/`);
      await page.fill('#token', 'alice-token');
      await page.click('#login-form button[type=submit]');
      const entry = page.locator(`.card[data-key="${pending.approvalId}"]`);
      await entry.waitFor({ timeout: 30_000 });
      await expect(entry.locator('.tool').textContent()).resolves.toBe('openai_mcp_approval');
      await expect(entry.locator('.input').textContent()).resolves.toContain('"publish_page"');
      await entry.locator('.reason').fill('release page reviewed');
      await entry.locator('button.approve').click();
      await page.locator('.toast.ok', { hasText: 'Approved openai_mcp_approval' }).waitFor();
      const result = await handle.result();
      expect(result.status).toBe('completed');
      expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'openai_mcp_approval', outcome: 'approved', approver: 'alice', reason: 'release page reviewed' })]);
      const [, second] = answered();
      expect(second.input).toContainEqual({ type: 'mcp_approval_response', approval_request_id: pending.toolCallId, approve: true });
    } finally {
      await browser.close();
      await api.close();
    }
  }, 180_000);

  it('denied, the model is told why with mcp_approval_response approve: false', async () => {
    fake.script('openai-responses', [{ hostedItems: askApproval() }, { text: 'I will not publish it.' }]);
    const handle = await startTurn([mcp], 'Publish the releases page.');
    const [pending] = await waitForPending(handle, 1);
    // OpenAI's answer is approve or deny: an edited call is refused before it enters history.
    const edited = handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'bob', input: { page: 'other' } }] });
    await expect(edited).rejects.toMatchObject({ cause: { message: expect.stringContaining('fails its schema') } });
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: false, approver: 'bob', reason: 'not before the review' }] });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    const [, second] = answered();
    const response = second.input.find((item: Json) => item.type === 'mcp_approval_response');
    expect(response).toMatchObject({ approval_request_id: pending.toolCallId, approve: false });
    expect(response.reason).toContain('not before the review');
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'openai_mcp_approval', outcome: 'denied', approver: 'bob', reason: 'not before the review' })]);
  }, 120_000);

  it('expired, it is denied and audited as expired', async () => {
    fake.script('openai-responses', [{ hostedItems: askApproval() }, { text: 'The approval expired; nothing was published.' }]);
    const handle = await startTurn([mcp], 'Publish the releases page.', { approvalTimeout: '2s' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    const [, second] = answered();
    const response = second.input.find((item: Json) => item.type === 'mcp_approval_response');
    expect(response).toMatchObject({ approve: false });
    expect(response.reason).toContain('expired');
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'openai_mcp_approval', outcome: 'expired', approved: false, automatic: true })]);
  }, 120_000);

  it('a turn cannot give a remote MCP server its URL or headers: the worker names them', async () => {
    const handle = await startTurn([{ type: 'mcp', server_label: 'docs', server_url: 'https://attacker.test/mcp' }], 'Hi.');
    await expect(handle.result()).rejects.toThrow();
    expect(answered()).toEqual([]);
  }, 60_000);
});
