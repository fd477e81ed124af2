/**
 * A parked client tool and an MCP server's question answered over A2A, driven only by
 * `@a2a-js/sdk`'s own client on the dev server: the task is `input-required` saying how to answer,
 * and the client's next message on the task (a data part `{ toolCallId, output, isError? }`)
 * answers it; several parts answer several calls; malformed answers, unknown or unparked calls and
 * another caller are refused with the protocol's errors, and nothing changes.
 */
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const ASK = 'everything__trigger-elicitation-request';

let turnpike: TurnpikeHarness;
let served: ServedApi;
let alice: Client;
let bob: Client;

async function clientWith(token: string): Promise<Client> {
  const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } });
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] });
  return factory.createFromUrl(`${served.base}/api/a2a/desk/`);
}

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools, mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } });
  served = await serveApi(turnpike, {
    tokens: parseTokenMap('alice-token:alice,bob-token:bob'),
    a2a: { agents: { desk: { description: 'Asks the user when it must', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['pick_colour', 'guarded_action', ASK] } } },
  });
  alice = await clientWith('alice-token');
  bob = await clientWith('bob-token');
});
afterAll(async () => {
  await served?.api.close();
  await turnpike?.stop();
});

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function data(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

function message(parts: Part[], taskId = ''): Message {
  return { messageId: randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

async function send(client: Client, sent: Message, returnImmediately = false): Promise<Task> {
  const configuration = returnImmediately ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately } : undefined;
  const result = await client.sendMessage({ tenant: '', message: sent, configuration, metadata: undefined });
  expect('status' in result).toBe(true);
  return result as Task;
}

function answerText(task: Task): string {
  return task.artifacts.flatMap((artifact) => artifact.parts).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

interface Waiting {
  kind: string;
  toolName: string;
  toolCallId: string;
  approvalId?: string;
  message?: string;
  requestedSchema?: unknown;
}

/** What the status message of an input-required task says waits: its words and its data part. */
function waitingOf(task: Task): { words: string; waiting: Waiting[] } {
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const parts = task.status!.message!.parts;
  const words = parts.find((part) => part.content?.$case === 'text')!.content!.value as string;
  const value = parts.find((part) => part.content?.$case === 'data')!.content!.value as { waiting: Waiting[] };
  return { words, waiting: value.waiting };
}

/** The name of the protocol error a send was refused with (the promise must be refused). */
async function refusal(work: Promise<unknown>): Promise<{ name: string; message: string }> {
  const error = await work.then(() => undefined, (caught: unknown) => caught as { name: string; message: string });
  expect(error).toBeDefined();
  return error!;
}

describe('A2A answers to client tools and questions', () => {
  it('parks a client tool as input-required saying how to answer; refuses bad answers and bob, then the answer completes the task', async () => {
    const parked = await send(alice, message([text(use('pick_colour', { options: ['red', 'green'] }))]));
    const { words, waiting } = waitingOf(parked);
    expect(words).toContain(`pick_colour waits for a client's result (toolCallId ${waiting[0]!.toolCallId})`);
    expect(words).toContain('a client tool with a data part { "toolCallId", "output", "isError"? }');
    expect(waiting).toEqual([expect.objectContaining({ kind: 'client-tool', toolName: 'pick_colour' })]);
    const { toolCallId } = waiting[0]!;
    const before = await served.client.turnState(parked.id);

    const refusals = await Promise.all(
      [
        { toolCallId, result: { colour: 'green' } },
        { toolCallId: 7, output: { colour: 'green' } },
        { toolCallId, output: { colour: 'green' }, isError: 'no' },
        { toolCallId },
      ].map(async (answer) => (await refusal(send(alice, message([data(answer)], parked.id)))).name),
    );
    expect(refusals).toEqual(['RequestMalformedError', 'RequestMalformedError', 'RequestMalformedError', 'RequestMalformedError']);
    const unknown = await refusal(send(alice, message([data({ toolCallId: 'call_nope', output: { colour: 'green' } })], parked.id)));
    expect(unknown.name).toBe('RequestMalformedError');
    expect(unknown.message).toContain('No client tool or question with toolCallId "call_nope" waits');
    // An output the tool's schema refuses is the turn's refusal, with its type.
    const invalid = await refusal(send(alice, message([data({ toolCallId, output: { colour: 'purple' } })], parked.id)));
    expect(invalid.name).toBe('UnsupportedOperationError');
    expect(invalid.message).toContain('InvalidToolOutput');
    // bob may not read alice's task: to him it is not there, and his answer changes nothing.
    expect((await refusal(send(bob, message([data({ toolCallId, output: { colour: 'red' } })], parked.id)))).name).toBe('TaskNotFoundError');
    expect(await served.client.turnState(parked.id)).toEqual(before);
    expect((await alice.getTask({ tenant: '', id: parked.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const done = await send(alice, message([text('here it is'), data({ toolCallId, output: { colour: 'green' } })], parked.id));
    expect(done.id).toBe(parked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(done)).toContain('"colour":"green"');
    const result = await served.client.turnResult(parked.id);
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolCallId, outcome: 'client', output: { colour: 'green' } })]);
  });

  it('answers several calls with the parts of one message; a message with one bad part answers none', async () => {
    const parked = await send(alice, message([text([use('pick_colour', { options: ['red'] }), use('pick_colour', { options: ['blue'] }), use('guarded_action', { target: 'a2a-answers', count: 1 })].join(' and '))]));
    const { words, waiting } = waitingOf(parked);
    expect(words).toContain('an approval with a data part { "approvalId", "approved", "reason"? }; a client tool with a data part');
    const [first, second] = waiting.filter((call) => call.kind === 'client-tool');
    const approval = waiting.find((call) => call.kind === 'approval')!;
    expect([first, second, approval].every(Boolean)).toBe(true);
    const before = await served.client.turnState(parked.id);

    // A valid answer beside an unknown id, the approval's call answered as a client tool, or one call answered twice: nothing is sent.
    const bad = [
      [data({ toolCallId: first!.toolCallId, output: { colour: 'red' } }), data({ toolCallId: 'call_nope', output: { colour: 'red' } })],
      [data({ toolCallId: first!.toolCallId, output: { colour: 'red' } }), data({ toolCallId: approval.toolCallId, output: { done: true } })],
      [data({ toolCallId: first!.toolCallId, output: { colour: 'red' } }), data({ toolCallId: first!.toolCallId, output: { colour: 'blue' } })],
    ];
    for (const parts of bad) expect((await refusal(send(alice, message(parts, parked.id)))).name).toBe('RequestMalformedError');
    expect(await served.client.turnState(parked.id)).toEqual(before);

    // One call answered; answering it again is answering a call that no longer waits.
    const still = await send(alice, message([data({ toolCallId: first!.toolCallId, output: { colour: 'red' } })], parked.id));
    expect(waitingOf(still).waiting.map((call) => call.toolCallId).sort()).toEqual([second!.toolCallId, approval.toolCallId].sort());
    const again = await refusal(send(alice, message([data({ toolCallId: first!.toolCallId, output: { colour: 'blue' } })], parked.id)));
    expect(again.name).toBe('RequestMalformedError');

    // The rest in one message: a decision and an error result.
    const done = await send(alice, message([data({ approvalId: approval.approvalId, approved: true }), data({ toolCallId: second!.toolCallId, output: 'the user closed the picker', isError: true })], parked.id));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(done)).toContain('"guarded":"a2a-answers"');
    expect(executionsOf(parked.id)).toHaveLength(1);
    const calls = (await served.client.turnResult(parked.id)).toolCalls;
    expect(calls.find((call) => call.toolCallId === first!.toolCallId)).toMatchObject({ outcome: 'client', output: { colour: 'red' } });
    expect(calls.find((call) => call.toolCallId === second!.toolCallId)).toMatchObject({ output: 'the user closed the picker', isError: true });
  });

  it("answers an MCP server's question: the task shows it with its schema, and the accepted answer reaches the server", async () => {
    // A question publishes no event of its own (docs/protocols.md): a blocking send would return
    // only at the turn's next one, so the task is started at once and read until the question shows.
    const parked = await send(alice, message([text(use(ASK, {}))]), true);
    let task = parked;
    for (let attempt = 0; attempt < 200 && task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      task = await alice.getTask({ tenant: '', id: parked.id });
    }
    const { words, waiting } = waitingOf(task);
    expect(words).toContain('a question with a data part { "toolCallId", "output": { "action": "accept"');
    expect(waiting).toEqual([expect.objectContaining({ kind: 'elicitation', toolName: ASK, message: expect.any(String), requestedSchema: expect.objectContaining({ type: 'object' }) })]);
    const { toolCallId } = waiting[0]!;
    const done = await send(alice, message([data({ toolCallId, output: { action: 'accept', content: { name: 'Ada Lovelace', email: 'ada@example.com' } } })], parked.id));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const call = (await served.client.turnResult(parked.id)).toolCalls[0]!;
    expect(call.outcome).toBe('executed');
    expect(JSON.stringify(call.output)).toContain('Ada Lovelace');
  });
});
