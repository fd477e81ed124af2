/**
 * Model steps carry the transcript by reference (workflows/context/transcript.ts): a worker that does not
 * have a turn's transcript reads it from the turn, and the model sees exactly the messages the
 * turn holds; a transcript that does not match the turn's hash is refused, never used.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { convertToOpenAIMessages } from '../../activities/providers/openai.js';
import { scriptedModelStep } from '../../activities/providers/scripted.js';
import { TOOL_SET_MISMATCH } from '../../activities/tool-set-cache.js';
import { TRANSCRIPT_MISMATCH } from '../../activities/transcript-cache.js';
import { CompressionCodec } from '../../codec/payload-codec.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import type { Message, ModelToolSpec } from '../../workflows/types/index.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import type { transcriptStep } from '../support/transcript-workflows.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { startUserWorker, type UserWorker } from '../support/user-worker.js';

const TRANSCRIPT_WORKFLOWS = fileURLToPath(new URL('../support/transcript-workflows.ts', import.meta.url));

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools });
});

afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

/** A conversation of `count` messages, each different, about 300 bytes each. */
function conversation(count: number): Message[] {
  return Array.from({ length: count }, (_, index): Message => {
    const text = `message ${index}: ${'order refund shipping invoice '.repeat(8)}${randomUUID()}`;
    return index % 2 === 0 ? { role: 'user', content: text } : { role: 'assistant', content: [{ type: 'text', text }] };
  });
}

/** The decompressed JSON of every callModel activity input in a turn's history. */
async function modelStepInputs(workflowId: string): Promise<string[]> {
  const history = await turnpike.client.workflow.getHandle(workflowId).fetchHistory();
  const codec = new CompressionCodec();
  const inputs: string[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') continue;
    const [payload] = await codec.decode(scheduled.input?.payloads as never);
    inputs.push(Buffer.from((payload as { data: Uint8Array }).data).toString('utf8'));
  }
  return inputs;
}

/**
 * Once the turn parks, replaces its worker: the worker that ran the first step, and its caches,
 * are gone, and a new worker runs the next step. Then approves the parked call; the turn's result.
 */
async function approveOnNewWorker(handle: Awaited<ReturnType<TurnpikeHarness['startTurn']>>) {
  const [pending] = await waitForPending(handle);
  await turnpike.stopWorker();
  await turnpike.startWorker();
  await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
  return handle.result();
}

describe('history by reference', () => {
  it('gives a model step on a freshly started worker exactly the messages the turn holds', async () => {
    const history = conversation(60);
    const system = 'You are a careful operations agent.';
    const request = 'Please run the guarded action on prod-db.';
    fake.script('openai', [
      { text: 'I need approval for that.', toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 2 } }] },
      { text: 'Done: the guarded action ran.' },
    ]);
    const handle = await turnpike.startTurn({
      model: { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 },
      system,
      messages: [...history, { role: 'user', content: request }],
    });
    const result = await approveOnNewWorker(handle);
    expect(result).toMatchObject({ status: 'completed', text: 'Done: the guarded action ran.', steps: 2 });
    expect(executionsOf(handle.workflowId)).toHaveLength(1);

    const [first, second] = fake.requests;
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.flatMap((recorded) => recorded.errors)).toEqual([]);
    // Both steps saw the whole conversation, exactly; the second, the first step's messages plus its call and result.
    const expectedFirst = convertToOpenAIMessages(system, [...history, { role: 'user', content: request }]);
    expect(first.body.messages).toEqual(JSON.parse(JSON.stringify(expectedFirst)));
    const expectedSecond = convertToOpenAIMessages(system, [...history, { role: 'user', content: request }, ...result.messages.slice(0, 2)]);
    expect(second.body.messages).toEqual(JSON.parse(JSON.stringify(expectedSecond)));
    expect(second.body.messages.slice(0, first.body.messages.length)).toEqual(first.body.messages);

    // Neither step's input in history carried the conversation: the new worker read it from the turn.
    const inputs = await modelStepInputs(handle.workflowId);
    expect(inputs).toHaveLength(2);
    for (const input of inputs) {
      expect(input).not.toContain(history[30].role === 'user' ? history[30].content : 'unreachable');
      expect(input.length).toBeLessThan(JSON.stringify(history).length / 5);
    }
  });

  it('sends a short turn\'s step after a park inline, so a new worker runs it without reading the turn', async () => {
    const request = 'Please run the guarded action on staging.';
    fake.script('openai', [
      { text: 'I need approval for that.', toolCalls: [{ name: 'guarded_action', input: { target: 'staging', count: 1 } }] },
      { text: 'Done on staging.' },
    ]);
    const handle = await turnpike.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 }, messages: [{ role: 'user', content: request }] });
    const result = await approveOnNewWorker(handle);
    expect(result).toMatchObject({ status: 'completed', text: 'Done on staging.', steps: 2 });
    const second = fake.requests[1]!;
    expect(second.body.messages).toEqual(JSON.parse(JSON.stringify(convertToOpenAIMessages(undefined, [{ role: 'user', content: request }, ...result.messages.slice(0, 2)]))));
    // The step after the park carried the whole (short) transcript: from 0, with the request.
    const [, afterPark] = await modelStepInputs(handle.workflowId);
    const reference = (JSON.parse(afterPark!) as { transcript: { from: number; length: number; added: unknown[] } }).transcript;
    expect(reference).toMatchObject({ from: 0, length: 3 });
    expect(reference.added).toHaveLength(3);
    expect(afterPark).toContain(request);
  });

  it('describes the turn\'s tools in its first step, names them by hash in every later one, and the model is offered them at every step', async () => {
    fake.script('openai', [
      { text: '', toolCalls: [{ name: 'record_action', input: { action: 'one' } }] },
      { text: '', toolCalls: [{ name: 'record_action', input: { action: 'two' } }] },
      { text: 'Both recorded.' },
    ]);
    const handle = await turnpike.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'Record one, then two.' }] });
    expect(await handle.result()).toMatchObject({ status: 'completed', steps: 3 });
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.flatMap((recorded) => recorded.errors)).toEqual([]);
    const offered = fake.requests[0]!.body.tools;
    expect(offered.map((tool: { function: { name: string } }) => tool.function.name)).toContain('record_action');
    for (const recorded of fake.requests) expect(recorded.body.tools).toEqual(offered);

    const inputs = (await modelStepInputs(handle.workflowId)).map(
      (json) => JSON.parse(json) as { tools?: Array<{ name: string }>; toolsHash?: string; describeTools?: { names?: string[] } },
    );
    expect(inputs).toHaveLength(3);
    const [first, ...later] = inputs;
    // The first step asks the worker to describe the turn's tools (all of them: the turn names none).
    expect(first).toMatchObject({ describeTools: {} });
    expect(first!.tools).toBeUndefined();
    expect(first!.toolsHash).toBeUndefined();
    const hash = later[0]!.toolsHash;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    for (const step of later) {
      expect(step.tools).toBeUndefined();
      expect(step.describeTools).toBeUndefined();
      expect(step.toolsHash).toBe(hash);
    }
  });

  it('runs a conversation\'s child turns by reference, each seeing the whole conversation before it', async () => {
    const conversations = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
    fake.setDefault('openai', (body) => ({ text: `I have read ${body.messages.length} messages.` }));
    const conversationId = `conversation-${randomUUID()}`;
    // Long messages: from the second turn on, even the first step's transcript goes by reference.
    const texts = [1, 2, 3].map((turn) => `question ${turn}: ${'please check the order status and the invoice '.repeat(60)}`);
    for (const [index, text] of texts.entries()) {
      const reply = await conversations.sendMessage({ conversationId, text, conversation: { model: { provider: 'openai', model: 'gpt-4.1-mini' } } });
      if (index === 0) noteStarted(conversations.conversation(conversationId));
      noteStarted(conversations.turn(reply.turnWorkflowId));
      const result = await conversations.turnResult(reply.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
      expect(result.text).toBe(`I have read ${2 * index + 1} messages.`);
      if (index > 0) expect((await modelStepInputs(reply.turnWorkflowId)).join('')).not.toContain('question 1');
    }
    const last = fake.requests.at(-1)!;
    expect(last.body.messages.map((message: { content: string }) => message.content)).toEqual([
      texts[0], 'I have read 1 messages.', texts[1], 'I have read 3 messages.', texts[2],
    ]);
    expect(fake.requests.flatMap((recorded) => recorded.errors)).toEqual([]);
  });
});

describe('a transcript that does not match the turn\'s hash', () => {
  let user: UserWorker;
  let client: Client;
  const taskQueue = `transcript-${randomUUID()}`;

  beforeAll(async () => {
    user = await startUserWorker({ taskQueue, workflowsPath: TRANSCRIPT_WORKFLOWS });
    ({ client } = user);
  });

  afterAll(async () => {
    await user?.stop();
  });

  const messages: Message[] = [...conversation(20), { role: 'user', content: use('record_action', { action: 'audit' }) }];

  function runStep(served: Message[], more: Omit<Parameters<typeof transcriptStep>[0], 'messages' | 'served'> = {}) {
    return client.workflow.execute<typeof transcriptStep>('transcriptStep', { taskQueue, workflowId: `transcript-${randomUUID()}`, args: [{ messages, served, ...more }] });
  }

  /** The failure of a step that must fail at once with `type`, its model not called. */
  async function expectRefused(step: Promise<unknown>, type: string): Promise<void> {
    const error = await step.then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const activity = (error as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    const cause = (activity as ActivityFailure).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(type);
    expect((cause as ApplicationFailure).nonRetryable).toBe(true);
    expect((activity as ActivityFailure).retryState).toBe('NON_RETRYABLE_FAILURE');
  }

  it('calls the model with the transcript the turn serves when it matches', async () => {
    const result = await runStep(messages);
    expect(result).toEqual(JSON.parse(JSON.stringify(scriptedModelStep({ model: { provider: 'scripted', model: 'demo' }, tools: [], messages }))));
    expect(result.message.content).toContainEqual(expect.objectContaining({ type: 'tool-call', toolName: 'record_action', input: { action: 'audit' } }));
  });

  it.each([
    ['an altered message', messages.map((message, index) => (index === messages.length - 1 ? { role: 'user' as const, content: use('issue_refund', { amount: 9999 }) } : message))],
    ['a missing message', messages.slice(1)],
    ['an inserted message', [{ role: 'user' as const, content: 'and one more thing' }, ...messages]],
  ])('refuses %s and fails the step without calling the model or retrying', async (_name, served) => {
    await expectRefused(runStep(served), TRANSCRIPT_MISMATCH);
  });

  // A tool list of its own (unique descriptions), so no earlier step has put it in the worker's cache.
  const tools = (): ModelToolSpec[] => [
    { name: 'lookup_order', description: `Look up an order (${randomUUID()}).`, inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'], additionalProperties: false } },
    { name: 'record_action', description: 'Record an action.', inputSchema: { type: 'object', properties: { action: { type: 'string' } }, required: ['action'], additionalProperties: false } },
  ];
  const openai = { provider: 'openai' as const, model: 'gpt-4.1-mini' };

  it('offers the model the tools a step names by hash alone, read from the turn', async () => {
    const offered = tools();
    fake.script('openai', [{ text: 'Nothing to do.' }]);
    await runStep(messages, { model: openai, tools: { hashed: offered, served: offered } });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.errors).toEqual([]);
    expect(fake.requests[0]!.body.tools.map((tool: { function: { name: string; description: string } }) => [tool.function.name, tool.function.description])).toEqual(
      offered.map((tool) => [tool.name, tool.description]),
    );
  });

  it('refuses tools the turn serves that do not match the step\'s hash, without calling the model', async () => {
    const offered = tools();
    const altered = offered.map((tool) => (tool.name === 'record_action' ? { ...tool, description: 'Record an action, and delete the audit log.' } : tool));
    await expectRefused(runStep(messages, { model: openai, tools: { hashed: offered, served: altered } }), TOOL_SET_MISMATCH);
    expect(fake.requests).toHaveLength(0);
  });
});
