/**
 * The operator's way in: the exact Temporal CLI commands the README documents, run against
 * the dev server with the CLI turnpike built.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const run = promisify(execFile);

async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await run(inject('temporalCli'), [...args, '--address', inject('temporalAddress')]);
  return stdout;
}

/** Visibility is eventually consistent: poll the listing until it shows the expected ids. */
async function listParked(taskQueue: string, expected: string[]): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  let ids: string[] = [];
  while (Date.now() < deadline) {
    const output = await temporal('workflow', 'list', '--query', `AgentTurnStatus="awaiting-input" AND TaskQueue="${taskQueue}"`, '-o', 'json');
    ids = output.trim() ? (JSON.parse(output) as Array<{ execution: { workflowId: string } }>).map((row) => row.execution.workflowId).sort() : [];
    if (JSON.stringify(ids) === JSON.stringify([...expected].sort())) return ids;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return ids;
}

describe('operators with the Temporal CLI', () => {
  let turnpike: TurnpikeHarness;
  beforeAll(async () => {
    turnpike = await startTurnpike({ tools: testTools });
  });
  afterAll(async () => turnpike?.stop());

  it('finds exactly the parked turns by AgentTurnStatus and approves them by update and by signal', async () => {
    const parkedA = await turnpike.startTurn({ text: use('guarded_action', { target: 'alpha', count: 1 }) });
    const parkedB = await turnpike.startTurn({ text: use('guarded_action', { target: 'bravo', count: 1 }) });
    const finished = await turnpike.startTurn({ text: use('record_action', { action: 'done' }) });
    await finished.result();
    const [pendingA] = await waitForPending(parkedA);
    const [pendingB] = await waitForPending(parkedB);

    expect(await listParked(turnpike.taskQueue, [parkedA.workflowId, parkedB.workflowId])).toEqual([parkedA.workflowId, parkedB.workflowId].sort());

    const pendingByList = await temporal('workflow', 'list', '--query', `AgentPendingTools="guarded_action" AND TaskQueue="${turnpike.taskQueue}"`, '-o', 'json');
    expect(pendingByList).toContain(parkedA.workflowId);

    const state = JSON.parse(await temporal('workflow', 'query', '--workflow-id', parkedA.workflowId, '--name', 'turnState', '-o', 'json'));
    expect(state.queryResult[0].pending[0].approvalId).toBe(pendingA.approvalId);

    const update = await temporal('workflow', 'update', 'execute', '--workflow-id', parkedA.workflowId, '--name', 'approveToolCall',
      '--input', JSON.stringify({ approvalId: pendingA.approvalId, approved: true, approver: 'alice' }));
    expect(update).toContain(pendingA.toolCallId);
    await temporal('workflow', 'signal', '--workflow-id', parkedB.workflowId, '--name', 'approveToolCall',
      '--input', JSON.stringify({ approvalId: pendingB.approvalId, approved: false, approver: 'bob', reason: 'not today' }));

    expect((await parkedA.result()).toolCalls[0].outcome).toBe('approved');
    expect((await parkedB.result()).toolCalls[0]).toMatchObject({ outcome: 'denied', approval: { reason: 'not today' } });
    expect(executionsOf(parkedA.workflowId)).toHaveLength(1);
    expect(executionsOf(parkedB.workflowId)).toHaveLength(0);
    expect(await listParked(turnpike.taskQueue, [])).toEqual([]);
  });

  it('rejects a bad decision sent with temporal workflow update execute, with the reason', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'charlie', count: 1 }) });
    await waitForPending(handle);
    const failure = await temporal('workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'approveToolCall',
      '--input', JSON.stringify({ approvalId: 'apr_unknown', approved: true })).then(() => '', (error: { stderr: string }) => error.stderr);
    expect(failure).toMatch(/Unknown approvalId \(11 characters\): this turn has no approval with this id/);
    expect((await handle.query(turnStateQuery)).pending).toHaveLength(1);
  });

  it('submits client tool results with temporal workflow update execute and signal', async () => {
    const handle = await turnpike.startTurn({ text: 'ask me "first?" and ask me "second?"' });
    const [first, second] = await waitForPending(handle, 2);
    const update = await temporal('workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'submitToolResult',
      '--input', JSON.stringify({ toolCallId: first.toolCallId, output: { answer: 'one' } }));
    expect(update).toContain(first.toolCallId);
    await temporal('workflow', 'signal', '--workflow-id', handle.workflowId, '--name', 'submitToolResult',
      '--input', JSON.stringify({ toolCallId: second.toolCallId, output: { answer: 'two' } }));
    const result = await handle.result();
    expect(result.toolCalls.map((call) => [call.outcome, call.output])).toEqual([['client', { answer: 'one' }], ['client', { answer: 'two' }]]);
  });

  it('cancels a parked turn with temporal workflow cancel', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'delta', count: 1 }) });
    await waitForPending(handle);
    await temporal('workflow', 'cancel', '--workflow-id', handle.workflowId);
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.toolCalls[0].outcome).toBe('cancelled');
  });
});
