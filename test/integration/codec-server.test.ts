/**
 * The operator recipe `npx turnpike codec-server` + the Temporal CLI's `--codec-endpoint`, run
 * as operators run it, against turns whose payloads are gzip-compressed: a finished turn with a
 * 100 KB input, and a turn parked on a call whose input is over the 4 KiB gzip threshold
 * (`CompressionCodec` in codec/payload-codec.ts), so its input, `turnState`, transcript, event
 * pages and result are all `binary/gzip` in Temporal.
 *
 * `show`, `describe`, `result`, every query with and without arguments (the CLI sends an empty
 * argument list as `{}`), and `update execute approveToolCall` print decoded JSON. The parked
 * turn's worker sends webhook nudges, so its history also holds `notifyApprovers`' empty result
 * (a `binary/null` payload, which the CLI sends without `data`).
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { agentTurn } from '../../workflows/index.js';
import type { TurnState } from '../../workflows/types/index.js';
import { startCodecServer, type CodecServerProcess } from '../support/codec-server-process.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const MARKER = 'codec-server-marker';
const LONG_TEXT = `${MARKER} ${Array.from({ length: 21_000 }, (_, index) => `w${index % 997}`).join(' ')}`;
const PARKED_MARKER = 'parked-call-marker';
/** Over the 4 KiB threshold on its own: the call's input, and everything that carries it, is gzipped. */
const TARGET = `${PARKED_MARKER} ${Array.from({ length: 1_200 }, (_, index) => `t${index}`).join(' ')}`;

let turnpike: TurnpikeHarness;
let webhook: Server;
let codecServer: CodecServerProcess;
let finishedId: string;
let parked: WorkflowHandle<typeof agentTurn>;
let pending: TurnState['pending'][number];

beforeAll(async () => {
  webhook = createServer((request, response) => request.resume().on('end', () => response.end())).listen(0, '127.0.0.1');
  await new Promise((resolve) => webhook.once('listening', resolve));
  turnpike = await startTurnpike({
    tools: testTools,
    notifications: { url: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`, secret: 'codec-test' },
  });
  const finished = await turnpike.startTurn({ text: LONG_TEXT });
  await finished.result();
  finishedId = finished.workflowId;
  parked = await turnpike.startTurn({ text: use('guarded_action', { target: TARGET, count: 2 }) });
  [pending] = await waitForPending(parked);
  codecServer = await startCodecServer();
});

afterAll(async () => {
  await codecServer?.stop();
  await turnpike?.stop();
  await new Promise((resolve) => webhook?.close(resolve));
});

/** Runs the Temporal CLI against the test's dev server, through the codec server unless `codec` is false. */
async function temporal(args: string[], { codec = true } = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(
    inject('temporalCli'),
    [...args, '--address', inject('temporalAddress'), ...(codec ? ['--codec-endpoint', codecServer.endpoint] : [])],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

async function temporalJson<T>(args: string[], options?: { codec?: boolean }): Promise<T> {
  return JSON.parse(await temporal([...args, '-o', 'json'], options)) as T;
}

interface JsonPayload {
  metadata: { encoding: string };
  data: string;
}

/** A query's answer as `temporal workflow query -o json` prints it. */
async function query<T>(name: string, input?: unknown, options?: { codec?: boolean }): Promise<T> {
  const args = ['workflow', 'query', '--workflow-id', parked.workflowId, '--name', name];
  if (input !== undefined) args.push('--input', JSON.stringify(input));
  const { queryResult } = await temporalJson<{ queryResult: [T] }>(args, options);
  return queryResult[0];
}

describe('temporal workflow show / describe --codec-endpoint', () => {
  /** The turn's input as `temporal workflow show -o json` prints it: [encoding, decoded data]. */
  async function startedInput(workflowId: string, codec: boolean): Promise<{ encoding: string; data: string }> {
    type Show = { events: Array<{ workflowExecutionStartedEventAttributes?: { input: { payloads: JsonPayload[] } } }> };
    const [started] = (await temporalJson<Show>(['workflow', 'show', '--workflow-id', workflowId], { codec })).events;
    const [payload] = started.workflowExecutionStartedEventAttributes!.input.payloads;
    return { encoding: Buffer.from(payload.metadata.encoding, 'base64').toString(), data: Buffer.from(payload.data, 'base64').toString() };
  }

  it('`workflow show` prints a compressed 100 KB turn input as JSON', async () => {
    expect(LONG_TEXT.length).toBeGreaterThan(100_000);
    const raw = await startedInput(finishedId, false);
    expect(raw.encoding).toBe('binary/gzip');
    expect(raw.data).not.toContain(MARKER);

    const decoded = await startedInput(finishedId, true);
    expect(decoded.encoding).toBe('json/plain');
    expect(JSON.parse(decoded.data)).toMatchObject({ messages: [{ role: 'user', content: LONG_TEXT }] });
  });

  it('`workflow show` reads a parked turn whose history holds an empty (binary/null) activity result', async () => {
    type Show = { events: Array<{ eventType: string; activityTaskCompletedEventAttributes?: { result?: { payloads: Array<Partial<JsonPayload>> } } }> };
    // The turn parks before its nudge's activity completes: read the history until that result is in it.
    let empty: Array<Partial<JsonPayload>> = [];
    for (const deadline = Date.now() + 30_000; empty.length === 0 && Date.now() < deadline; ) {
      const { events } = await temporalJson<Show>(['workflow', 'show', '--workflow-id', parked.workflowId]);
      const results = events.flatMap((event) => event.activityTaskCompletedEventAttributes?.result?.payloads ?? []);
      empty = results.filter((payload) => Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString() === 'binary/null');
      if (empty.length === 0) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(empty.length).toBeGreaterThan(0);
    expect(empty.every((payload) => !payload.data)).toBe(true);
    const input = await startedInput(parked.workflowId, true);
    expect(JSON.parse(input.data)).toMatchObject({ messages: [{ role: 'user', content: use('guarded_action', { target: TARGET, count: 2 }) }] });
  });

  it('`workflow describe` prints the parked call from the turn\'s memo', async () => {
    type Describe = { workflowExecutionInfo: { memo: { fields: { turnpikePending: { calls: Array<{ approvalId: string; toolName: string }> } } } } };
    const described = await temporalJson<Describe>(['workflow', 'describe', '--workflow-id', parked.workflowId]);
    expect(described.workflowExecutionInfo.memo.fields.turnpikePending.calls).toMatchObject([{ approvalId: pending.approvalId, toolName: 'guarded_action' }]);
  });
});

describe('temporal workflow query --codec-endpoint', () => {
  it('turnState, without arguments, prints the parked call with its approvalId and input', async () => {
    // The command as typed, in the CLI's text output.
    const text = await temporal(['workflow', 'query', '--workflow-id', parked.workflowId, '--name', 'turnState']);
    expect(text).toContain(pending.approvalId!);
    expect(text).toContain(PARKED_MARKER);

    const state = await query<TurnState>('turnState');
    expect(state.status).toBe('awaiting-input');
    expect(state.pending).toEqual([expect.objectContaining({ approvalId: pending.approvalId, toolName: 'guarded_action', input: { target: TARGET, count: 2 } })]);
  });

  it('without the codec server the same answer is compressed bytes', async () => {
    const args = ['workflow', 'query', '--workflow-id', parked.workflowId, '--name', 'turnState'];
    const raw = await temporalJson<{ queryResult: { payloads: JsonPayload[] } }>(args, { codec: false });
    expect(Buffer.from(raw.queryResult.payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/gzip');
    expect(await temporal(args, { codec: false })).not.toContain(PARKED_MARKER);
  });

  it('transcript, without arguments and with { offset, limit }', async () => {
    type Page = { messages: Array<{ role: string; content: unknown }>; offset: number; total: number };
    const whole = await query<Page>('transcript');
    expect(whole.offset).toBe(0);
    expect(whole.messages.length).toBe(whole.total);
    expect(whole.messages[0]).toEqual({ role: 'user', content: use('guarded_action', { target: TARGET, count: 2 }) });
    expect(whole.total).toBeGreaterThan(1);

    const second = await query<Page>('transcript', { offset: 1, limit: 1 });
    expect(second).toMatchObject({ offset: 1, total: whole.total });
    expect(second.messages).toEqual([whole.messages[1]]);
    expect(JSON.stringify(second.messages[0])).toContain(PARKED_MARKER);
  });

  it('turnEvents, without arguments and with { fromOffset, limit }', async () => {
    type Page = { events: Array<{ offset: number; event: { type: string; toolName?: string } }>; nextOffset: number };
    const all = await query<Page>('turnEvents');
    expect(all.events.length).toBeGreaterThan(2);
    expect(all.nextOffset).toBe(all.events.at(-1)!.offset + 1);
    expect(all.events.map(({ event }) => event.type)).toContain('tool-input-start');
    expect(JSON.stringify(all.events)).toContain(PARKED_MARKER);

    const page = await query<Page>('turnEvents', { fromOffset: 1, limit: 2 });
    expect(page.events).toEqual(all.events.slice(1, 3));
    expect(page.nextOffset).toBe(3);
  });
});

describe('temporal workflow update execute / result --codec-endpoint', () => {
  it('approveToolCall prints its decoded answer, and the approved turn\'s compressed result prints as JSON', async () => {
    const decision = { approvalId: pending.approvalId, approved: true, approver: 'alice', reason: 'read through the codec server' };
    const args = ['workflow', 'update', 'execute', '--workflow-id', parked.workflowId, '--name', 'approveToolCall', '--input', JSON.stringify(decision)];
    const answer = await temporalJson<{ result: unknown }>(args);
    expect(answer.result).toEqual({ approvalId: pending.approvalId, toolCallId: pending.toolCallId, approved: true, decidedAt: expect.any(String) });
    await parked.result();

    type Result = { status: string; closeEvent: { workflowExecutionCompletedEventAttributes: { result: unknown[] } } };
    const resultArgs = ['workflow', 'result', '--workflow-id', parked.workflowId];
    const raw = await temporalJson<{ closeEvent: { workflowExecutionCompletedEventAttributes: { result: { payloads: JsonPayload[] } } } }>(resultArgs, { codec: false });
    const [compressed] = raw.closeEvent.workflowExecutionCompletedEventAttributes.result.payloads;
    expect(Buffer.from(compressed.metadata.encoding, 'base64').toString()).toBe('binary/gzip');

    const decoded = await temporalJson<Result>(resultArgs);
    expect(decoded.status).toBe('COMPLETED');
    const [result] = decoded.closeEvent.workflowExecutionCompletedEventAttributes.result;
    expect(result).toMatchObject({
      status: 'completed',
      toolCalls: [{ toolName: 'guarded_action', input: { target: TARGET, count: 2 }, outcome: 'approved', approval: { approver: 'alice' } }],
      decisions: [{ approvalId: pending.approvalId, approved: true, approver: 'alice' }],
    });
  });
});
