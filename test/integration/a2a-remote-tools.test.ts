/**
 * Remote A2A agents as tools (`defineA2aAgentTool`) on the dev server, against remote agents
 * served by `@a2a-js/sdk`'s own server classes (test/support/a2a-remote-agent.ts): an artifact
 * becomes the call's result; `input-required` reaches the model with the question and the task
 * id, and the model's next call answers it on the same remote task; a failed task, an unknown
 * task and a forged answer are error results; a retried attempt starts no second remote task; an
 * approval-gated call sends nothing until approved; a worker killed (SIGKILL) while the remote
 * task works loses nothing, and the remote saw one task.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineA2aAgentTool } from '../../activities/a2a-remote/a2a-agent-tool.js';
import { messageIdOf } from '../../activities/a2a-remote/a2a-remote-call.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnResult, Message, ToolCallRecord } from '../../workflows/types/index.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import { BIG_ANSWER, startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { isStoredOutput } from '../../content/stored-content.js';
import { noteStarted } from '../support/history-recorder.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { until } from '../support/until.js';

let turnpike: TurnpikeHarness;
/** Behind `warehouse`. */
let warehouse: RemoteAgent;
/** Behind `flaky_warehouse`, whose first SendMessage loses its answer. */
let flaky: RemoteAgent;
/** Behind `guarded_warehouse`, which waits for approval. */
let guarded: RemoteAgent;
/** Behind `forged_warehouse`, whose answers the test forges. */
let forged: RemoteAgent;
const workers: WorkerProcess[] = [];
const remotes: RemoteAgent[] = [];

async function remote(): Promise<RemoteAgent> {
  const agent = await startRemoteAgent();
  remotes.push(agent);
  return agent;
}

beforeAll(async () => {
  [warehouse, flaky, guarded, forged] = await Promise.all([remote(), remote(), remote(), remote()]);
  let lost = 0;
  /** Delivers the first SendMessage to the remote, then fails as a dropped connection would. */
  const losesFirstAnswer: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (typeof init?.body === 'string' && init.body.includes('"SendMessage"') && lost++ === 0) throw new TypeError('fetch failed: socket hang up');
    return response;
  };
  const options = { pollInterval: '200ms', timeout: '1m' };
  turnpike = await startTurnpike({
    tools: [
      defineA2aAgentTool({ name: 'warehouse', url: warehouse.url, description: 'Answers questions about orders.', ...options }),
      defineA2aAgentTool({ name: 'flaky_warehouse', card: flaky.card as never, fetch: losesFirstAnswer, ...options }),
      defineA2aAgentTool({ name: 'guarded_warehouse', url: guarded.url, description: 'Orders changes; a person approves each.', approval: true, ...options }),
      defineA2aAgentTool({ name: 'forged_warehouse', url: forged.url, description: 'Answers, forged.', ...options }),
    ],
  });
}, 180_000);

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  for (const agent of remotes) {
    agent.openLatch();
    await agent.close();
  }
  await turnpike?.stop();
});

function use(tool: string, input: unknown): string {
  return `use ${tool} with ${JSON.stringify(input)}`;
}

async function run(tool: string, input: unknown, messages: Message[] = []): Promise<{ result: AgentTurnResult; call: ToolCallRecord; turnId: string }> {
  const handle = await turnpike.startTurn({ messages: [...messages, { role: 'user', content: use(tool, input) }] });
  const result = await handle.result();
  expect(result.status).toBe('completed');
  const call = result.toolCalls.at(-1)!;
  expect(call.toolName).toBe(tool);
  return { result, call, turnId: handle.workflowId };
}

/** What the model was given for the call: the tool message in the turn's transcript. */
function seenByModel(result: AgentTurnResult, toolCallId: string): unknown {
  for (const message of result.messages) {
    if (message.role !== 'tool') continue;
    const part = message.content.find((candidate) => candidate.toolCallId === toolCallId);
    if (part) return part.output;
  }
  return undefined;
}

describe('a remote A2A agent as a tool', () => {
  it('sends the message once and gives the model the remote task artifacts', async () => {
    const { result, call, turnId } = await run('warehouse', { message: 'answer: when does order 1001 ship?' });
    expect(call.isError).toBe(false);
    expect(call.output).toBe('Order 1001 ships on Tuesday.\n{"orderId":"1001","eta":"Tuesday"}');
    expect(seenByModel(result, call.toolCallId)).toBe(call.output);
    expect(result.text).toContain('Order 1001 ships on Tuesday.');
    expect(warehouse.created).toHaveLength(1);
    // The message id is the call's, derived from the turn's id and the call's id.
    expect(warehouse.received).toEqual([{ messageId: messageIdOf(`${turnId}/${call.toolCallId}`), taskId: warehouse.created[0], text: 'answer: when does order 1001 ship?' }]);
    expect(warehouse.methods.filter((method) => method === 'SendMessage')).toHaveLength(1);
    expect(warehouse.methods).not.toContain('ListTasks');
  });

  it('passes the remote question to the model, and its next call answers it on the same remote task', async () => {
    const before = warehouse.created.length;
    const first = await run('warehouse', { message: 'ask: paint my order' });
    const taskId = warehouse.created[before]!;
    expect(first.call.isError).toBe(false);
    expect(first.call.output).toContain('Which colour do you want?');
    expect(first.call.output).toContain(`{"taskId": "${taskId}", "message": "<the answer>"}`);
    const second = await run('warehouse', { message: 'blue', taskId }, first.result.messages);
    expect(second.call.isError).toBe(false);
    expect(second.call.output).toBe('Painted it blue.');
    expect(warehouse.created).toHaveLength(before + 1);
    expect(warehouse.received.slice(-2).map(({ taskId: id, text }) => ({ id, text }))).toEqual([
      { id: taskId, text: 'ask: paint my order' },
      { id: taskId, text: 'blue' },
    ]);
  });

  it('keeps a large artifact by reference, as any large tool output', async () => {
    const { call } = await run('warehouse', { message: 'big: the whole inventory' });
    expect(call.isError).toBe(false);
    expect(isStoredOutput(call.output)).toBe(true);
    const reader = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
    expect(await reader.readToolOutput(call.output)).toBe(BIG_ANSWER);
  });

  it('answers a failed remote task with an error result the model reads', async () => {
    const { result, call } = await run('warehouse', { message: 'fail: ship order 1001' });
    expect(call.isError).toBe(true);
    expect(call.output).toMatch(/^Tool "warehouse" failed: The remote agent's task [\w-]+ ended failed: The warehouse is closed\.$/);
    expect(result.text).toContain('failed');
  });

  it('answers an unknown remote task with an error result, and sends nothing else', async () => {
    const sends = warehouse.methods.length;
    const { call } = await run('warehouse', { message: 'blue', taskId: 'no-such-task' });
    expect(call.isError).toBe(true);
    expect(call.output).toContain('The remote agent has no task no-such-task');
    expect(warehouse.methods.slice(sends)).toEqual(['GetTask']);
  });

  it('refuses a forged or malformed remote answer with an error result', async () => {
    forged.forge = (method, answer) => (method === 'GetTask' ? { ...answer, result: { id: 'someone-elses-task', status: { state: 'TASK_STATE_COMPLETED' } } } : answer);
    const other = await run('forged_warehouse', { message: 'wait: for me' });
    expect(other.call.isError).toBe(true);
    expect(other.call.output).toMatch(/malformed: the remote agent answered with task "someone-elses-task" where task "[\w-]+" was asked for/);
    forged.forge = (method, answer) => (method === 'SendMessage' ? { ...answer, result: { task: { status: { state: 'TASK_STATE_WORKING' } } } } : answer);
    const noId = await run('forged_warehouse', { message: 'answer: now' });
    expect(noId.call.isError).toBe(true);
    expect(noId.call.output).toContain('malformed: the remote agent answered with a task without a valid id');
    forged.forge = (method, answer) => (method === 'GetTask' ? { ...answer, result: { id: (answer.result as { id: string }).id, status: { state: 'TASK_STATE_DANCING' } } } : answer);
    const unknownState = await run('forged_warehouse', { message: 'wait: again' });
    expect(unknownState.call.isError).toBe(true);
    expect(unknownState.call.output).toContain('with no known state');
    forged.forge = (method, answer) => (method === 'GetTask' ? 'not json' : answer);
    const notJson = await run('forged_warehouse', { message: 'wait: once more' });
    expect(notJson.call.isError).toBe(true);
    expect(notJson.call.output).toContain("The remote agent's answer is malformed: it is not JSON");
    forged.forge = undefined;
  });

  it('redacts a credential the remote echoes in its refusal before it reaches the history', async () => {
    // A worker's credential (any *_TOKEN variable counts) that the remote quotes back, as a
    // refusing server may.
    const token = `whse-${'k3y'.repeat(8)}`;
    process.env.WAREHOUSE_A2A_TOKEN = token;
    try {
      forged.forge = (method, answer) => (method === 'SendMessage' ? { jsonrpc: '2.0', id: answer.id, error: { code: -32600, message: `Token ${token} may not send to this warehouse; key=sk-proj-${'x'.repeat(40)}` } } : answer);
      const { call, turnId } = await run('forged_warehouse', { message: 'answer: now' });
      expect(call.isError).toBe(true);
      expect(call.output).toMatch(/^Tool "forged_warehouse" failed: The remote agent refused the request: .*Token \[redacted\] may not send to this warehouse; key=\[redacted\]/);
      const history = JSON.stringify(await turnpike.client.workflow.getHandle(turnId).fetchHistory());
      expect(history).not.toContain(token);
      expect(history).not.toContain('sk-proj-');
    } finally {
      forged.forge = undefined;
      delete process.env.WAREHOUSE_A2A_TOKEN;
    }
  });

  it('starts one remote task when the attempt that sent the message lost its answer', async () => {
    const { call } = await run('flaky_warehouse', { message: 'answer: when does order 1001 ship?' });
    expect(call.isError).toBe(false);
    expect(call.output).toContain('Order 1001 ships on Tuesday.');
    expect(flaky.created).toHaveLength(1);
    // The second attempt found the task by the message's id instead of sending it again.
    expect(flaky.methods.filter((method) => method === 'SendMessage')).toHaveLength(1);
    expect(flaky.methods).toContain('ListTasks');
  });

  it('parks an approval-gated call before anything is sent, and sends it once approved', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_warehouse', { message: 'answer: cancel order 1001' }) });
    const [pending] = await waitForPending(handle);
    expect(pending!.toolName).toBe('guarded_warehouse');
    expect(guarded.methods).toEqual([]);
    expect(guarded.received).toEqual([]);
    const { approveToolCallUpdate } = await import('../../workflows/messages/definitions.js');
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending!.approvalId!, approved: true, approver: 'ops' }] });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', isError: false, output: 'Order 1001 ships on Tuesday.\n{"orderId":"1001","eta":"Tuesday"}' });
    expect(guarded.created).toHaveLength(1);
  });
});

describe('a worker killed while the remote task works', () => {
  it('loses nothing: a new worker follows the same remote task to its answer', async () => {
    const agent = await remote();
    const taskQueue = `a2a-kill-${randomUUID()}`;
    const env = {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: taskQueue,
      WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      TEST_A2A_URL: agent.url,
    };
    const first = await startWorkerProcess(env, 'test/support/a2a-tool-worker-process.ts');
    workers.push(first);
    const handle: WorkflowHandle<typeof agentTurn> = await turnpike.client.workflow.start<typeof agentTurn>('agentTurn', {
      taskQueue,
      workflowId: `a2a-kill-${randomUUID()}`,
      args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('warehouse', { message: 'wait: pack order 1001' }) }] }],
    });
    noteStarted(handle);
    // The remote task is working (its executor waits on the latch), and has been read since.
    await until(() => agent.created.length === 1 && agent.methods.filter((method) => method === 'GetTask').length >= 2);
    await first.kill();
    const killedAt = Date.now();
    expect(first.child.signalCode).toBe('SIGKILL');
    const reads = agent.methods.length;
    const next = await startWorkerProcess(env, 'test/support/a2a-tool-worker-process.ts');
    workers.push(next);
    const readyAt = Date.now();
    await until(() => agent.methods.length > reads);
    const firstReadAt = Date.now();
    await until(() => agent.methods.length > reads + 2);
    agent.openLatch();
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'warehouse', isError: false, output: 'Waited, and done.' });
    // One remote task, one message: the new worker read the task the first one started.
    expect(agent.created).toHaveLength(1);
    expect(agent.received).toHaveLength(1);
    expect(agent.methods.filter((method) => method === 'SendMessage')).toHaveLength(1);
    expect(agent.methods).not.toContain('ListTasks');
    // Every read was an attempt of one activity: the history holds one executeTool and no timer.
    const { events } = await handle.fetchHistory();
    const scheduled = events!.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool');
    expect(scheduled).toHaveLength(1);
    expect(events!.filter((event) => event.timerStartedEventAttributes)).toHaveLength(0);
    const polls = agent.methods.filter((method) => method === 'GetTask').length;
    expect(polls).toBeGreaterThan(4);
    console.log(
      `a2a-remote-tools: the call read the remote task ${polls} times across 2 workers; the turn's history has ${events!.length} events; ` +
        `the new worker polled ${readyAt - killedAt} ms after the kill and read the task ${firstReadAt - killedAt} ms after it`,
    );
  }, 120_000);
});
