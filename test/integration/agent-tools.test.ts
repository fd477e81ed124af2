/**
 * Agents as tools: a turn calls a sub-agent (`defineAgentTool`), which runs as a child turn on
 * the same task queue. Its approvals park in the child and are listed with the parent's id; they
 * are decided, denied or expire there, and the child's answer is the parent's tool result. Every
 * call of both turns gets exactly one result, cancelled ones included; depth and cycles are
 * refused; readers of the parent see the child's events nested. Real dev server, the strict fake
 * providers through the real OpenAI and Anthropic SDKs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { ToolDefinitionError } from '../../activities/tools.js';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import type { NestedTurnEventRecord } from '../../client/nested-turn-events.js';
import { NestedCursorError } from '../../client/nested-cursor.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { supersedeTurnSignal } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput, AgentTurnResult, ApprovalNotification, Message, ModelProvider, ModelSettings } from '../../workflows/types/index.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { noteStarted } from '../support/history-recorder.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { startTurnpike, waitForState, type TurnpikeHarness, waitForListed } from '../support/turnpike-harness.js';
import { serveApi } from '../support/api-server.js';

const PROVIDERS = ['openai', 'anthropic'] as const;

function modelOf(provider: ModelProvider): ModelSettings {
  return provider === 'openai' ? { provider, model: 'gpt-4.1-mini', maxTokens: 512 } : { provider, model: 'claude-sonnet-4-5', maxTokens: 512 };
}

/** Per provider: a researcher that may use the guarded tool, and a delegate that calls the researcher. */
function agentToolsOf(provider: ModelProvider) {
  const research = defineAgentTool({
    name: `research_${provider}`,
    description: 'Researches a target with the guarded tool.',
    inputSchema: z.object({ target: z.string().min(3) }),
    agent: { model: modelOf(provider), system: 'You are the researcher.', tools: ['guarded_action', 'record_action'], maxSteps: 4 },
    prompt: (input) => `Research ${input.target}.`,
  });
  const delegate = defineAgentTool({
    name: `delegate_${provider}`,
    description: 'Hands the work to the researcher.',
    inputSchema: z.object({ target: z.string() }),
    agent: { model: modelOf(provider), system: 'You are the delegate.', tools: [research.name] },
  });
  const ping = defineAgentTool({
    name: `ping_${provider}`,
    description: 'Asks pong.',
    inputSchema: z.object({}),
    agent: { model: modelOf(provider), tools: [`pong_${provider}`] },
  });
  const pong = defineAgentTool({
    name: `pong_${provider}`,
    description: 'Asks ping.',
    inputSchema: z.object({}),
    agent: { model: modelOf(provider), tools: [`ping_${provider}`] },
  });
  const gated = defineAgentTool({
    name: `gated_research_${provider}`,
    description: 'Researches, once a person agreed.',
    inputSchema: z.object({ target: z.string().min(3) }),
    agent: { model: modelOf(provider), tools: [] },
    approval: true,
    approvers: ['alice'],
  });
  return [research, delegate, ping, pong, gated];
}

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;
let base: string;

/** The approvers' webhook: every nudge the worker sent. */
const nudges: ApprovalNotification[] = [];
let receiver: http.Server;

beforeAll(async () => {
  fake = await useFakeProviders();
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      nudges.push((JSON.parse(body) as { turnpike: ApprovalNotification }).turnpike);
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  turnpike = await startTurnpike({
    tools: [...testTools, ...PROVIDERS.flatMap(agentToolsOf)],
    notifications: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 'a-webhook-secret' },
  });
  ({ client, api, base } = await serveApi(turnpike));
});

afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await fake?.restore();
});

beforeEach(() => fake.reset());

function startParent(provider: ModelProvider, tools: string[], extra: Partial<AgentTurnInput> & { startedBy?: string } = {}): Promise<WorkflowHandle<typeof agentTurn>> {
  return turnpike.startTurn({ model: modelOf(provider), system: 'You are the lead.', text: 'Please look into prod-db.', tools, ...extra });
}

function requestsOf(provider: FakeProvider) {
  return fake.requests.filter((request) => request.provider === provider);
}

const listedFor = (turnId: string, count: number): Promise<ParkedCall[]> => waitForListed(client, turnId, count);

/** Every tool call in these messages has exactly one result. */
function expectOneResultEach(messages: Message[]): void {
  const calls = messages.flatMap((message) => (message.role === 'assistant' ? message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId) : []));
  const results = messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : []));
  expect(results.sort()).toEqual(calls.sort());
}

/** The turn's history replays against the workflow code (a nondeterminism error fails the test). */
async function replays(handle: WorkflowHandle): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, await handle.fetchHistory(), handle.workflowId);
}

/** A parent's child turn; recorded with the replay histories like the turns the harness starts. */
const childOf = (parent: WorkflowHandle, toolCallId: string) => {
  const child = turnpike.client.workflow.getHandle<typeof agentTurn>(`${parent.workflowId}/${toolCallId}`);
  noteStarted(child);
  return child;
};

it('refuses at definition time an agent tool that lists itself', () => {
  expect(() =>
    defineAgentTool({ name: 'narcissus', description: 'Calls itself.', inputSchema: z.object({}), agent: { model: modelOf('openai'), tools: ['narcissus'] } }),
  ).toThrow(ToolDefinitionError);
});

it('refuses a turn whose maxAgentDepth is not an integer of at least 0', async () => {
  const handle = await turnpike.startTurn({ text: 'hello', maxAgentDepth: -1 });
  const failure = await handle.result().then(
    () => undefined,
    (error: unknown) => error as Error & { cause?: Error },
  );
  expect(failure?.cause?.message).toBe('agentTurn input.maxAgentDepth must be an integer of at least 0');
});

describe.each(PROVIDERS)('%s', (provider) => {
  const research = `research_${provider}`;

  it('parks the child turn’s approval where it belongs, lists it with the parent, and completes both once it is approved', async () => {
    fake.script(provider, [
      { toolCalls: [{ id: 'call_research', name: research, input: { target: 'prod-db' } }] },
      { toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 2 } }] },
      { text: 'Guarded prod-db twice.' },
      { text: 'The researcher guarded prod-db.' },
    ]);
    const parent = await startParent(provider, [research]);
    const child = childOf(parent, 'call_research');
    const [parked] = await listedFor(child.workflowId, 1);
    expect(parked).toMatchObject({ kind: 'approval', toolName: 'guarded_action', parentTurnId: parent.workflowId, parentToolCallId: 'call_research' });
    const parentState = await waitForState(parent, (state) => (state.children?.length ?? 0) === 1);
    expect(parentState.children).toEqual([{ toolCallId: 'call_research', toolName: research, turnId: child.workflowId, status: 'running' }]);
    expect((await client.turnState(child.workflowId)).parentTurn).toEqual({ turnId: parent.workflowId, toolCallId: 'call_research', path: [research] });
    // The approvers' nudge names the parent turn too.
    const nudged = async () => {
      for (let tries = 0; tries < 150 && !nudges.some((nudge) => nudge.turnId === child.workflowId); tries++) await new Promise((resolve) => setTimeout(resolve, 200));
      return nudges.find((nudge) => nudge.turnId === child.workflowId && nudge.event === 'parked');
    };
    expect(await nudged()).toMatchObject({ approvalId: parked.approvalId, parentTurnId: parent.workflowId });

    await client.approveToolCall(child.workflowId, { approvalId: parked.approvalId!, approved: true, approver: 'alice' });
    const [childResult, parentResult] = await Promise.all([child.result(), parent.result()]);
    expect(childResult).toMatchObject({ status: 'completed', text: 'Guarded prod-db twice.' });
    expect(parentResult).toMatchObject({ status: 'completed', text: 'The researcher guarded prod-db.' });
    expect(parentResult.toolCalls).toEqual([
      expect.objectContaining({ toolCallId: 'call_research', outcome: 'executed', output: 'Guarded prod-db twice.', isError: false, usage: childResult.usage }),
    ]);
    // The prompt function wrote the child's user message.
    expect(JSON.stringify(requestsOf(provider)[1].body)).toContain('Research prod-db.');
    // Each tool ran once; the parent's usage holds its own two steps and the child's.
    expect(executionsOf(parent.workflowId).map((run) => run.toolName)).toEqual(['guarded_action']);
    expect(parentResult.usage.outputTokens).toBe(10 + childResult.usage.outputTokens);
    expect(childResult.usage.outputTokens).toBe(10);
    expectOneResultEach(parentResult.messages);
    expect(fake.requests.every((request) => request.errors.length === 0)).toBe(true);
    // Both histories replay against the workflow code: the child start, the patch, the nested park.
    for (const handle of [parent, child]) await replays(handle);
  });

  it('tells the child’s model of a denial and of an expiry, and gives the parent the child’s answer', async () => {
    fake.script(provider, [
      { toolCalls: [{ id: 'call_denied', name: research, input: { target: 'prod-db' } }] },
      { toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 1 } }] },
      { text: 'I was not allowed to.' },
      { toolCalls: [{ id: 'call_expired', name: research, input: { target: 'staging' } }] },
      { toolCalls: [{ name: 'guarded_action', input: { target: 'staging', count: 1 } }] },
      { text: 'Nobody answered in time.' },
      { text: 'Neither went through.' },
    ]);
    const parent = await startParent(provider, [research], { approvalTimeout: '3s' });
    const [denied] = await listedFor(`${parent.workflowId}/call_denied`, 1);
    await client.approveToolCall(denied.turnWorkflowId, { approvalId: denied.approvalId!, approved: false, approver: 'bob', reason: 'not on a Friday' });
    const parentResult: AgentTurnResult = await parent.result();
    expect(parentResult.status).toBe('completed');
    const requests = requestsOf(provider);
    expect(requests).toHaveLength(7);
    // What each child's model was told about its call.
    expect(JSON.stringify(requests[2].body)).toContain('not on a Friday');
    expect(JSON.stringify(requests[5].body)).toContain('expired after 3s');
    expect(parentResult.toolCalls.map(({ toolCallId, outcome, output }) => ({ toolCallId, outcome, output }))).toEqual([
      { toolCallId: 'call_denied', outcome: 'executed', output: 'I was not allowed to.' },
      { toolCallId: 'call_expired', outcome: 'executed', output: 'Nobody answered in time.' },
    ]);
    const children = await Promise.all(['call_denied', 'call_expired'].map((id) => childOf(parent, id).result()));
    expect(children.map((result) => result.toolCalls.map((call) => call.outcome))).toEqual([['denied'], ['expired']]);
    expect(executionsOf(parent.workflowId)).toEqual([]);
    expect(fake.requests.every((request) => request.errors.length === 0)).toBe(true);
  });

  it.each(['cancel', 'supersede'] as const)('%s: the parent cancels the child, and every open call of both turns gets exactly one result', async (how) => {
    fake.script(provider, [
      {
        toolCalls: [
          { id: 'call_research', name: research, input: { target: 'prod-db' } },
          { id: 'call_guarded', name: 'guarded_action', input: { target: 'prod-db', count: 1 } },
        ],
      },
      { toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 3 } }, { name: 'record_action', input: { action: 'note' } }] },
    ]);
    const parent = await startParent(provider, [research, 'guarded_action']);
    const child = childOf(parent, 'call_research');
    await listedFor(child.workflowId, 1);
    await waitForState(parent, (state) => state.pending.length === 1);
    if (how === 'cancel') await parent.cancel();
    else await parent.signal(supersedeTurnSignal, { reason: 'A newer message arrived.' });

    const [parentResult, childResult] = await Promise.all([parent.result(), child.result()]);
    expect(childResult.status).toBe('cancelled');
    expect(childResult.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([
      ['guarded_action', 'cancelled'],
      ['record_action', 'executed'],
    ]);
    expectOneResultEach(childResult.messages);
    expect(parentResult.status).toBe('cancelled');
    expectOneResultEach(parentResult.messages);
    const agentCall = parentResult.toolCalls.find((call) => call.toolCallId === 'call_research')!;
    expect(agentCall).toMatchObject({ outcome: 'cancelled', isError: true });
    expect(agentCall.output).toContain('ended with status "cancelled"');
    expect(parentResult.toolCalls.find((call) => call.toolCallId === 'call_guarded')).toMatchObject({ outcome: 'cancelled' });
    // Only the child's unguarded note ran.
    expect(executionsOf(parent.workflowId).map((run) => run.toolName)).toEqual(['record_action']);
    expect(fake.requests.every((request) => request.errors.length === 0)).toBe(true);
    for (const handle of [parent, child]) await replays(handle);
  });

  it('refuses a call deeper than maxAgentDepth and a cycle, with error results the model reads', async () => {
    fake.script(provider, [
      // Depth: the parent allows one level; the delegate's own call to the researcher would be a second.
      { toolCalls: [{ id: 'call_delegate', name: `delegate_${provider}`, input: { target: 'prod-db' } }] },
      { toolCalls: [{ id: 'call_deep', name: research, input: { target: 'prod-db' } }] },
      { text: 'Too deep for me.' },
      { text: 'Done.' },
    ]);
    const deep = await startParent(provider, [`delegate_${provider}`], { maxAgentDepth: 1 });
    const deepResult = await deep.result();
    expect(deepResult.status).toBe('completed');
    const delegate = await childOf(deep, 'call_delegate').result();
    expect(delegate.toolCalls).toEqual([expect.objectContaining({ toolCallId: 'call_deep', outcome: 'error', isError: true })]);
    expect(delegate.toolCalls[0].output).toContain(`would nest agents 2 deep (delegate_${provider} > ${research}), deeper than the limit of 1`);
    expect(JSON.stringify(requestsOf(provider)[2].body)).toContain('deeper than the limit of 1');

    fake.script(provider, [
      { toolCalls: [{ id: 'call_ping', name: `ping_${provider}`, input: {} }] },
      { toolCalls: [{ id: 'call_pong', name: `pong_${provider}`, input: {} }] },
      { toolCalls: [{ id: 'call_again', name: `ping_${provider}`, input: {} }] },
      { text: 'Ping is busy.' },
      { text: 'Pong said ping is busy.' },
      { text: 'Done.' },
    ]);
    const cyclic = await startParent(provider, [`ping_${provider}`]);
    expect((await cyclic.result()).status).toBe('completed');
    const pong = await turnpike.client.workflow.getHandle<typeof agentTurn>(`${cyclic.workflowId}/call_ping/call_pong`).result();
    expect(pong.toolCalls[0].output).toContain(`already running further up this chain of agents (ping_${provider} > pong_${provider} > ping_${provider})`);
    expect(fake.requests.every((request) => request.errors.length === 0)).toBe(true);
  });

  it('lists a conversation’s sub-agent calls with its pending calls, and gives an error result for a child that runs out of steps', async () => {
    fake.script(provider, [
      { toolCalls: [{ id: 'call_research', name: research, input: { target: 'prod-db' } }] },
      { toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 1 } }] },
    ]);
    const conversationId = `conversation-${provider}-${Date.now()}`;
    const sent = await client.sendMessage({ conversationId, conversation: { model: modelOf(provider), tools: [research] }, text: 'Please look into prod-db.' });
    const childId = `${sent.turnWorkflowId}/call_research`;
    const pending = await (async () => {
      for (let tries = 0; tries < 150; tries++) {
        const calls = await client.conversationPending(conversationId);
        if (calls.length > 0) return calls;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error('the conversation never listed its sub-agent’s call');
    })();
    expect(pending).toEqual([
      expect.objectContaining({ toolName: 'guarded_action', turnWorkflowId: childId, conversationId, parentTurnId: sent.turnWorkflowId, parentToolCallId: 'call_research' }),
    ]);
    // Decided: the researcher (maxSteps 4) keeps calling tools until it runs out of steps.
    fake.script(provider, [
      { text: 'Still looking.', toolCalls: [{ name: 'record_action', input: { action: 'a' } }] },
      { text: 'Looking more.', toolCalls: [{ name: 'record_action', input: { action: 'b' } }] },
      { text: 'Almost there.', toolCalls: [{ name: 'record_action', input: { action: 'c' } }] },
      { text: 'The researcher ran out of steps.' },
    ]);
    await client.approveToolCall(childId, { approvalId: pending[0].approvalId!, approved: true, approver: 'alice' });
    const parentResult = await client.turnResult(sent.turnWorkflowId);
    expect(parentResult.status).toBe('completed');
    expect(parentResult.toolCalls[0]).toMatchObject({ toolCallId: 'call_research', outcome: 'error', isError: true });
    expect(parentResult.toolCalls[0].output).toBe(`The sub-agent of "${research}" ended with status "max-steps" without an answer. Its last text: Almost there.`);
    // The conversation's history holds its turn, not the child's.
    const history = await client.history(conversationId);
    expect(JSON.stringify(history)).not.toContain('Still looking.');
    expect(fake.requests.every((request) => request.errors.length === 0)).toBe(true);
  });

  it('parks an approval-gated agent tool’s call in the parent, and starts its child only once it is approved', async () => {
    fake.script(provider, [
      { toolCalls: [{ id: 'call_gated', name: `gated_research_${provider}`, input: { target: 'prod-db' } }] },
      { text: 'Nothing to see on prod-db.' },
      { text: 'The researcher found nothing.' },
    ]);
    const parent = await startParent(provider, [`gated_research_${provider}`]);
    const [parked] = await listedFor(parent.workflowId, 1);
    expect(parked).toMatchObject({ kind: 'approval', toolName: `gated_research_${provider}`, approvers: ['alice'], input: { target: 'prod-db' } });
    expect(parked.parentTurnId).toBeUndefined();
    // No child yet: the model was asked once.
    expect(requestsOf(provider)).toHaveLength(1);
    await client.approveToolCall(parent.workflowId, { approvalId: parked.approvalId!, approved: true, approver: 'alice' });
    const result = await parent.result();
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolCallId: 'call_gated', outcome: 'approved', output: 'Nothing to see on prod-db.', approval: expect.objectContaining({ approver: 'alice' }) })]);
    // Without a prompt function the child is sent the input as JSON.
    expect(JSON.stringify(requestsOf(provider)[1].body)).toContain(JSON.stringify(JSON.stringify({ target: 'prod-db' })).slice(1, -1));
  });

  it('shows a reader of the parent the child’s events, nested under the calling tool call', async () => {
    fake.script(provider, [
      { toolCalls: [{ id: 'call_research', name: research, input: { target: 'prod-db' } }] },
      { toolCalls: [{ id: 'call_note', name: 'record_action', input: { action: 'look' } }] },
      { text: 'Looked at prod-db.' },
      { text: 'All done.' },
    ]);
    // Started by alice, who may then read it through the HTTP API.
    const parent = await startParent(provider, [research], { startedBy: 'alice' });
    const events: NestedTurnEventRecord[] = [];
    for await (const record of client.nestedTurnEvents(parent.workflowId)) events.push(record);
    const own = events.filter((record) => record.turnId === undefined).map((record) => record.event.type);
    expect(own).toContain('agent-started');
    expect(own.at(-1)).toBe('turn-finished');
    const started = events.find((record) => record.event.type === 'agent-started')!.event;
    expect(started).toMatchObject({ toolCallId: 'call_research', toolName: research, turnId: `${parent.workflowId}/call_research` });
    const nested = events.filter((record) => record.turnId !== undefined);
    expect(nested.every((record) => record.parentToolCallId === 'call_research' && record.turnId === `${parent.workflowId}/call_research`)).toBe(true);
    expect(nested.every((record) => JSON.stringify(record.path) === JSON.stringify([research]))).toBe(true);
    expect(nested.map((record) => record.event.type)).toEqual(expect.arrayContaining(['tool-call', 'tool-result', 'turn-finished']));
    expect(nested.find((record) => record.event.type === 'turn-finished')!.event).toMatchObject({ status: 'completed', text: 'Looked at prod-db.' });
    // The parent's own stream holds none of the child's events.
    const parentOwn = [];
    for await (const record of client.turnEvents(parent.workflowId)) parentOwn.push(record);
    expect(parentOwn).toHaveLength(own.length);

    // The same through the HTTP API: each id is the record's cursor, led by the parent's own offset.
    const { status, messages } = await readSseFrom(`${base}/api/turns/${encodeURIComponent(parent.workflowId)}/events?nested=true`, { authorization: 'Bearer alice-token' }, (message) => message.event === 'end');
    expect(status).toBe(200);
    const data = messages.filter((message) => message.event === 'message').map((message) => ({ id: message.id, record: JSON.parse(message.data) as NestedTurnEventRecord }));
    expect(data.filter(({ record }) => record.turnId === undefined).map(({ id, record }) => [id?.split('~')[0], record.event.type])).toEqual(parentOwn.map((record) => [String(record.offset), record.event.type]));
    expect(data.every(({ id, record }) => id !== undefined && id === record.cursor)).toBe(true);
    const nestedOverSse = data.filter(({ record }) => record.turnId !== undefined);
    expect(nestedOverSse.map(({ record }) => record.event.type)).toEqual(nested.map((record) => record.event.type));
    expect(nestedOverSse.every(({ record }) => record.parentToolCallId === 'call_research')).toBe(true);
    // While the child runs, the ids name it (after its turn-finished it is no longer open).
    expect(nestedOverSse.filter(({ record }) => record.event.type !== 'turn-finished').every(({ id }) => id?.includes('~'))).toBe(true);
    // Who started the parent may read the child as well.
    expect(await client.describeStart(`${parent.workflowId}/call_research`)).toMatchObject({ startedBy: 'alice' });
  });
});

describe('a nested reader that reconnects while a child turn runs', () => {
  const research = 'research_openai';
  /** The parent calls the researcher, whose guarded call parks until it is approved. */
  const scriptParkedChild = () =>
    fake.script('openai', [
      { toolCalls: [{ id: 'call_research', name: research, input: { target: 'prod-db' } }] },
      { toolCalls: [{ id: 'call_guarded', name: 'guarded_action', input: { target: 'prod-db', count: 1 } }] },
      { text: 'Guarded prod-db once.' },
      { text: 'The researcher guarded prod-db.' },
    ]);
  const isChildApproval = (record: NestedTurnEventRecord) => record.turnId !== undefined && record.event.type === 'approval-requested';

  /** Every stream's events read once, in order: the offsets of each are 0, 1, 2... to its turn-finished. */
  async function expectEachStreamOnce(records: NestedTurnEventRecord[], parentId: string, childId: string): Promise<void> {
    const offsetsOf = (turnId: string | undefined) => records.filter((record) => record.turnId === turnId).map((record) => record.offset);
    for (const [turnId, read] of [[parentId, offsetsOf(undefined)], [childId, offsetsOf(childId)]] as const) {
      const whole: number[] = [];
      for await (const record of client.turnEvents(turnId)) whole.push(record.offset);
      expect(read, turnId).toEqual(whole);
    }
    expect(records.filter((record) => record.event.type === 'turn-finished').map((record) => record.turnId)).toEqual(expect.arrayContaining([undefined, childId]));
  }

  async function approveChild(childId: string): Promise<void> {
    const [parked] = await listedFor(childId, 1);
    await client.approveToolCall(childId, { approvalId: parked.approvalId!, approved: true, approver: 'alice' });
  }

  it('over SSE: resumes after Last-Event-ID with the child’s remaining events and the parent’s, each once', async () => {
    scriptParkedChild();
    const parent = await startParent('openai', [research], { startedBy: 'alice' });
    const childId = childOf(parent, 'call_research').workflowId;
    const url = `${base}/api/turns/${encodeURIComponent(parent.workflowId)}/events?nested=true`;
    const bearer = { authorization: 'Bearer alice-token' };
    const recordOf = (message: SseMessage) => JSON.parse(message.data) as NestedTurnEventRecord;
    // The connection drops once the child's approval request arrived.
    const first = await readSseFrom(url, bearer, (message) => message.event === 'message' && isChildApproval(recordOf(message)));
    expect(first.status).toBe(200);
    const lastId = first.messages.at(-1)!.id!;
    // The id says where the reader stands in the child: its stream is named by the agent-started offset.
    const startedAt = first.messages.map(recordOf).find((record) => record.event.type === 'agent-started')!.offset;
    expect(lastId).toMatch(new RegExp(`^\\d+~${startedAt}:\\d+$`));
    expect(first.messages.every((message) => message.id === recordOf(message).cursor)).toBe(true);

    // A reconnect with a hostile or malformed Last-Event-ID is refused, naming the problem.
    for (const hostile of ['x~1', `0${'~1'.repeat(40)}`, '9'.repeat(600), `${startedAt}~0`, `${startedAt}~${startedAt}:2~${startedAt}.1`]) {
      const response = await fetch(url, { headers: { ...bearer, 'last-event-id': hostile } });
      expect(response.status, hostile).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('nested stream cursor');
    }

    const rest = readSseFrom(url, { ...bearer, 'last-event-id': lastId }, (message) => message.event === 'end');
    await approveChild(childId);
    const second = await rest;
    expect(second.status).toBe(200);
    const records = [...first.messages, ...second.messages.filter((message) => message.event === 'message')].map(recordOf);
    await expectEachStreamOnce(records, parent.workflowId, childId);
    // The child's remaining events came on the second connection, through its turn-finished.
    expect(second.messages.map((message) => message.event === 'message' && recordOf(message)).find((record) => record && record.turnId === childId && record.event.type === 'turn-finished')).toMatchObject({
      parentToolCallId: 'call_research',
      path: [research],
      event: { status: 'completed', text: 'Guarded prod-db once.' },
    });
    // Once the child finished for the reader, the parent's ids are plain offsets again.
    expect(second.messages.filter((message) => message.event === 'message').at(-1)!.id).toBe(String(records.filter((record) => record.turnId === undefined).at(-1)!.offset));
  });

  it('through nestedTurnEvents: resumes after a record’s cursor with every later event once, and refuses a cursor naming no child', async () => {
    scriptParkedChild();
    const parent = await startParent('openai', [research]);
    const childId = childOf(parent, 'call_research').workflowId;
    const first: NestedTurnEventRecord[] = [];
    for await (const record of client.nestedTurnEvents(parent.workflowId)) {
      first.push(record);
      if (isChildApproval(record)) break;
    }
    const cursor = first.at(-1)!.cursor!;
    expect(cursor).toContain('~');
    await expect(client.nestedTurnEvents(parent.workflowId, { after: '0~0' }).next()).rejects.toThrow(NestedCursorError);
    await expect(client.nestedTurnEvents(parent.workflowId, { after: 'nonsense' }).next()).rejects.toThrow(NestedCursorError);

    const rest: NestedTurnEventRecord[] = [];
    const reading = (async () => {
      for await (const record of client.nestedTurnEvents(parent.workflowId, { after: cursor })) rest.push(record);
    })();
    await approveChild(childId);
    await reading;
    expect(rest.some((record) => record.turnId === childId && record.event.type === 'turn-finished')).toBe(true);
    await expectEachStreamOnce([...first, ...rest], parent.workflowId, childId);
  });
});
