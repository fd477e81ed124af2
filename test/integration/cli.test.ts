/**
 * The turnpike CLI on the real dev server: every command in-process through `runCli`, with a
 * TurnpikeClient on this file's task queue and the output captured, and `bin/turnpike.js` once as
 * a real process that connects from the environment.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import type { ApproveToolCallResult, HistoryPage, PendingToolCall } from '../../workflows/types/index.js';
import { cliRunner } from '../support/cli-runner.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const GUARDED = use('guarded_action', { target: 'prod', count: 1 });

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});
afterAll(async () => turnpike?.stop());

const { launch, cli, cliJson } = cliRunner(() => client);

/** Polls `read` until `done` holds: for visibility and conversation history, which lag a moment. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} never happened; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Starts a turn with the CLI and waits until it parks. */
async function startParked(text = GUARDED): Promise<{ turnId: string; call: PendingToolCall }> {
  const { turnId } = await cliJson<{ turnId: string }>('start', '--model', 'scripted:demo', text);
  const [call] = await waitForPending(client.turn(turnId));
  return { turnId, call };
}

async function listedByPending(turnId: string): Promise<ParkedCall[]> {
  return until(
    () => cliJson<ParkedCall[]>('pending'),
    (calls) => calls.some((call) => call.turnWorkflowId === turnId),
    `turnpike pending listing ${turnId}`,
  );
}

describe('turnpike CLI', () => {
  it('starts a turn and returns its id with --json, or says how to watch it', async () => {
    const turnId = `turn-${randomUUID()}`;
    const started = await cliJson('start', '--model', 'scripted:demo', '--id', turnId, '--approval-timeout', '1h', GUARDED);
    expect(started).toEqual({ turnId, taskQueue: turnpike.taskQueue, model: { provider: 'scripted', model: 'demo' } });
    const [call] = await waitForPending(client.turn(turnId));
    expect(call).toMatchObject({ kind: 'approval', toolName: 'guarded_action' });
    expect(Date.parse(call.expiresAt) - Date.parse(call.requestedAt)).toBe(3_600_000);

    const text = await cli('start', '--model', 'scripted:demo', 'look', 'up', 'order', '1002');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Started turn-\S+ \(scripted:demo\) on task queue test-/);
    const [, shownId] = /turnpike watch (\S+)/.exec(text.stdout)!;
    expect((await client.turnResult(shownId)).text).toContain('Coffee grinder');
    await client.turn(turnId).cancel();
  });

  it('lists a parked approval with pending, as JSON and as a table', async () => {
    const { turnId, call } = await startParked();
    const listed = await listedByPending(turnId);
    expect(listed.find((entry) => entry.turnWorkflowId === turnId)).toEqual({ ...call, turnWorkflowId: turnId });

    const table = await cli('pending');
    expect(table.code).toBe(0);
    for (const text of [turnId, call.approvalId!, 'approval', 'guarded_action', '{"target":"prod","count":1}', 'expires in', `turnpike approve ${turnId} ${call.approvalId}`]) {
      expect(table.stdout).toContain(text);
    }
    expect(table.stdout).not.toContain('\u001b['); // No colours when stdout is not a terminal...

    const saved = process.env.NO_COLOR;
    try {
      delete process.env.NO_COLOR;
      expect((await launch(['pending'], true).done).stdout).toContain('\u001b['); // ...but on one,
      process.env.NO_COLOR = '1';
      expect((await launch(['pending'], true).done).stdout).not.toContain('\u001b['); // unless NO_COLOR is set.
    } finally {
      if (saved === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = saved;
    }
    await client.turn(turnId).cancel();
  });

  it('approves a call: the turn completes and show lists the outcome approved with the approver', async () => {
    const { turnId, call } = await startParked();
    const approved = await cli('approve', turnId, call.approvalId!, '--as', 'alice', '--reason', 'looks right');
    expect(approved).toMatchObject({ code: 0, stderr: '' });
    expect(approved.stdout).toContain(`approved ${call.approvalId} (${call.toolCallId})`);
    await client.turnResult(turnId);

    const shown = await cliJson<{ execution: string; result: { status: string; toolCalls: unknown[] } }>('show', turnId);
    expect(shown).toMatchObject({ turnId, execution: 'COMPLETED', result: { status: 'completed', steps: 2 } });
    expect(shown.result.toolCalls).toEqual([
      expect.objectContaining({ toolName: 'guarded_action', outcome: 'approved', approval: expect.objectContaining({ approver: 'alice', reason: 'looks right', automatic: false }) }),
    ]);
    const text = await cli('show', turnId);
    for (const expected of [turnId, 'completed', '2 step(s)', 'guarded_action', 'approved', 'alice: looks right']) expect(text.stdout).toContain(expected);
    expect(executionsOf(turnId)).toHaveLength(1);
  });

  it('denies a call with a reason the model is told, and the tool never runs', async () => {
    const { turnId, call } = await startParked();
    const denied = await cliJson<ApproveToolCallResult>('deny', turnId, call.approvalId!, '--reason', 'not during the freeze', '--as', 'bob');
    expect(denied).toMatchObject({ approvalId: call.approvalId, toolCallId: call.toolCallId, approved: false });
    const result = await client.turnResult(turnId);
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'denied', approval: { approver: 'bob', reason: 'not during the freeze' } });
    const text = await cli('show', turnId);
    expect(text.stdout).toContain('denied');
    expect(text.stdout).toContain('bob: not during the freeze');
    expect(executionsOf(turnId)).toHaveLength(0);
  });

  it('lists the audit trail with decisions, filtered by approver, as a table and as JSON lines', async () => {
    const { turnId, call } = await startParked('refund $250 on order 1001');
    expect((await cli('deny', turnId, call.approvalId!, '--reason', 'audited', '--as', 'carol')).code).toBe(0);
    await client.turnResult(turnId);
    const lines = (await cli('decisions', '--approver', 'carol', '--jsonl')).stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ turnWorkflowId: turnId, approvalId: call.approvalId, outcome: 'denied', approver: 'carol', reason: 'audited', automatic: false })]);
    const table = await cli('decisions', '--approver', 'carol');
    for (const expected of [turnId, 'issue_refund', 'denied', 'carol', 'audited']) expect(table.stdout).toContain(expected);
    expect((await cli('decisions', '--since', 'yesterday-ish')).code).toBe(2);
  });

  it('submits a client tool\'s result; output its schema rejects exits 3', async () => {
    const { turnId, call } = await startParked('ask me "which size?"');
    expect(call).toMatchObject({ kind: 'client-tool', toolName: 'ask_user' });

    const invalid = await cli('submit', turnId, call.toolCallId, '{"size":"large"}');
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toContain('rejected (InvalidToolOutput)');

    const submitted = await cli('submit', turnId, call.toolCallId, '{"answer":"large"}');
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(submitted.stdout).toContain(`result submitted for ${call.toolCallId}`);
    const result = await client.turnResult(turnId);
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'client', output: { answer: 'large' }, isError: false });
    expect(result.text).toContain('large');
  });

  it('exits 3 with the type and message when the workflow rejects a decision, and the turn is unchanged', async () => {
    const { turnId, call } = await startParked();
    const unknown = await cli('approve', turnId, 'apr_unknown', '--as', 'alice');
    expect(unknown).toMatchObject({ code: 3, stdout: '' });
    expect(unknown.stderr).toMatch(/turnpike: rejected \(UnknownApprovalId\): Unknown approvalId \(11 characters\): this turn has no approval with this id/);

    const notAllowed = await cli('deny', turnId, call.approvalId!, '--reason', 'no', '--as', 'mallory', '--json');
    expect(notAllowed).toMatchObject({ code: 3, stdout: '' });
    expect(JSON.parse(notAllowed.stderr)).toMatchObject({ error: { exitCode: 3, kind: 'rejected', type: 'ApproverNotAllowed', message: expect.stringMatching(/^The approver \(7 characters\) may not decide/) } });

    expect((await client.turnState(turnId)).pending).toEqual([call]);
    await client.turn(turnId).cancel();
  });

  it('exits 4 for a turn or conversation that does not exist', async () => {
    for (const argv of [
      ['show', 'no-such-turn'],
      ['watch', 'no-such-turn'],
      ['approve', 'no-such-turn', 'apr_1'],
      ['submit', 'no-such-turn', 'call_1_1', '{}'],
      ['history', 'no-such-conversation'],
    ]) {
      const run = await cli(...argv);
      expect(run, argv.join(' ')).toMatchObject({ code: 4, stdout: '' });
      expect(run.stderr).toMatch(/^turnpike: not found: /);
    }
  });

  it('exits 2 on bad usage, with nothing on stdout; --help documents the exit codes', async () => {
    for (const argv of [
      [],
      ['frobnicate'],
      ['start'],
      ['start', '--model', 'gpt-5', 'hello'],
      ['deny', 'turn-1', 'apr_1'],
      ['submit', 'turn-1', 'call_1_1', 'not json'],
      ['history', 'conv-1', '--limit', '0'],
      ['send', 'conv-1', 'hi', '--policy', 'drop'],
      ['pending', '--json', '--bogus'],
    ]) {
      const run = await cli(...argv);
      expect(run, argv.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr).not.toBe('');
    }
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes:[\s\S]*3 {2}rejected by the workflow[\s\S]*4 {2}not found/);
  });

  it('watch prints the parked call and exits 0 with the result when the turn completes', async () => {
    const { turnId, call } = await startParked();
    const watching = launch(['watch', turnId, '--interval', '100']);
    await until(async () => watching.output().stdout, (stdout) => stdout.includes(call.approvalId!), 'watch printing the parked call');
    await client.approveToolCall(turnId, { approvalId: call.approvalId!, approved: true, approver: 'alice' });
    const watched = await watching.done;
    expect(watched).toMatchObject({ code: 0, stderr: '' });
    expect(watched.stdout).toMatch(new RegExp(`awaiting-input[\\s\\S]*${call.approvalId}[\\s\\S]*turnpike approve ${turnId}[\\s\\S]*completed[\\s\\S]*approved`));
  });

  it('watch streams the text as the model writes it, before the result, and --json gives it as text events', async () => {
    const { turnId, call } = await startParked();
    const watching = launch(['watch', turnId, '--interval', '100']);
    const jsonWatching = launch(['watch', turnId, '--interval', '100', '--json']);
    await until(async () => watching.output().stdout, (stdout) => stdout.includes(call.approvalId!), 'watch printing the parked call');
    await client.approveToolCall(turnId, { approvalId: call.approvalId!, approved: true, approver: 'alice' });
    const [watched, jsonWatched] = await Promise.all([watching.done, jsonWatching.done]);
    const result = await client.turnResult(turnId);
    expect(watched).toMatchObject({ code: 0, stderr: '' });
    // The streamed line (step 2's text, on one line) comes before the result block.
    const streamedAt = watched.stdout.indexOf(`step 2: ${result.text}\n`);
    expect(streamedAt).toBeGreaterThan(watched.stdout.indexOf(call.approvalId!));
    expect(watched.stdout.lastIndexOf('completed')).toBeGreaterThan(streamedAt);
    const lines = jsonWatched.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; text?: string; step?: number });
    const texts = lines.filter((line) => line.type === 'text');
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.map((line) => line.text).join('')).toBe(result.text);
    expect(lines.findIndex((line) => line.type === 'result')).toBeGreaterThan(lines.findIndex((line) => line.type === 'text'));
  });

  it('start --wait, watch and show report a reply cut off by the token limit: status max-tokens, the step and why', async () => {
    const fake = await useFakeProviders();
    try {
      fake.script('anthropic', [
        { text: 'Order 1002 is a coffee grinder that', toolCalls: [{ name: 'lookup_order', input: { orderId: '10' } }], finishReason: 'max_tokens' },
      ]);
      const run = await cli('start', '--wait', '--json', '--interval', '100', '--model', 'anthropic:claude-sonnet-4-5', 'look up order 1002');
      expect(run.code, run.stderr).toBe(0);
      const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; turnId: string; result?: { status: string } });
      expect(events.at(-1)).toMatchObject({
        type: 'result',
        result: { status: 'max-tokens', text: 'Order 1002 is a coffee grinder that', cutOff: { step: 1, finishReason: 'length', providerFinishReason: 'max_tokens' }, toolCalls: [{ toolName: 'lookup_order', outcome: 'cancelled' }] },
      });
      const { turnId } = events[0];

      const shown = await cli('show', turnId);
      expect(shown.code, shown.stderr).toBe(0);
      for (const expected of [`${turnId}  max-tokens  1 step(s)`, 'step 1 was cut off by the output token limit or the context window (max_tokens)', 'its tool calls did not run', 'lookup_order', 'cancelled']) {
        expect(shown.stdout).toContain(expected);
      }
      const watched = await cli('watch', turnId);
      expect(watched).toMatchObject({ code: 0, stderr: '' });
      expect(watched.stdout).toContain('max-tokens');
      expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
    } finally {
      await fake.restore();
    }
  });

  it('start --wait --json streams one JSON event per line, ending with the result', async () => {
    const run = await cli('start', '--wait', '--json', '--interval', '100', '--model', 'scripted:demo', 'look up order 1002');
    expect(run.code, run.stderr).toBe(0);
    const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; result?: { status: string; text: string } });
    expect(events[0]).toMatchObject({ type: 'started' });
    expect(events.at(-1)).toMatchObject({ type: 'result', result: { status: 'completed', text: expect.stringContaining('Coffee grinder') } });
  });

  it('sends messages to a conversation, resolves its parked call, and shows its history', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const sent = await cliJson('send', conversationId, '--model', 'scripted:demo', '--message-id', 'm-1', 'look up order 1002');
    expect(sent).toEqual({ messageId: 'm-1', turnWorkflowId: `${conversationId}/turn-1`, turnNumber: 1, queued: false });
    await client.turnResult(`${conversationId}/turn-1`);

    const second = await cli('send', conversationId, GUARDED);
    expect(second.stdout).toContain(`Started ${conversationId}/turn-2`);
    const [parked] = await until(() => cliJson<ParkedCall[]>('pending', '--conversation', conversationId), (calls) => calls.length === 1, 'the conversation\'s parked call');
    expect(parked).toMatchObject({ turnWorkflowId: `${conversationId}/turn-2`, conversationId, toolName: 'guarded_action' });
    expect((await cli('approve', parked.turnWorkflowId, parked.approvalId!, '--as', 'alice')).code).toBe(0);

    const history = await until(() => cliJson<HistoryPage>('history', conversationId), (page) => page.total === 8, 'both turns in the history');
    expect(history.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['look up order 1002', GUARDED]);
    const page = await cliJson<HistoryPage>('history', conversationId, '--offset', '1', '--limit', '2');
    expect(page).toEqual({ offset: 1, total: 8, messages: history.messages.slice(1, 3) });

    const text = await cli('history', conversationId);
    for (const expected of ['#0', 'look up order 1002', '→ lookup_order {"orderId":"1002"}', '← lookup_order', 'Coffee grinder', 'messages 0–7 of 8']) {
      expect(text.stdout).toContain(expected);
    }
    const shown = await cli('show', conversationId);
    expect(shown.code).toBe(4);
    expect(shown.stderr).toContain(`turnpike history ${conversationId}`);
  });

  it('bin/turnpike.js runs as a process, connects from the environment (or --task-queue) and forwards the exit code', async () => {
    const { turnId, call } = await startParked();
    await listedByPending(turnId);
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: turnpike.taskQueue,
    };
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['bin/turnpike.js', 'pending', '--json'], { cwd: REPO, env });
    expect((JSON.parse(stdout) as ParkedCall[]).find((entry) => entry.turnWorkflowId === turnId)).toMatchObject({ approvalId: call.approvalId });

    const { TURNPIKE_TASK_QUEUE: _, ...withoutQueue } = env;
    const byOption = await run(process.execPath, ['bin/turnpike.js', 'pending', '--task-queue', turnpike.taskQueue], { cwd: REPO, env: withoutQueue });
    expect(byOption.stdout).toContain(call.approvalId);

    const rejected = await run(process.execPath, ['bin/turnpike.js', 'approve', turnId, 'apr_unknown'], { cwd: REPO, env }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(rejected).toMatchObject({ code: 3, stdout: '', stderr: expect.stringContaining('UnknownApprovalId') });
    await client.turn(turnId).cancel();
  });
});
