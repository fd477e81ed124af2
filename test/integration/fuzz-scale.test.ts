/**
 * 2,000 hostile signals and updates on 4 parked turns at once, half by raw gRPC and half by the
 * client: malformed, stale, forged and undecodable messages, a 1–1.9 MB value in every string
 * field (and as a key, and as an unknown field), messages nested 100,000 levels deep, and the
 * signals in bursts, so that one workflow task handles many. No workflow task fails, no update
 * is accepted, no rejection quotes what it refuses, the turns' state does not change, and every
 * turn completes after valid decisions.
 */
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import { isRejectionType } from '../../workflows/messages/rejection-types.js';
import { UNDECODABLE, deepJson, incompressible, json, payload, rawSignal, rawUpdate } from '../support/hostile-payloads.js';
import { completeTurn, historyOf, parkTurn, type ParkedTurn } from '../support/parked-turn.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const TURNS = 4;
const MESSAGES_PER_TURN = 500;
const BURST = 25;
/** Starts every value a hostile message carries: no rejection may contain it. */
const MARK = 'Zq7MARKq';

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Name = 'approveToolCall' | 'submitToolResult' | 'supersedeTurn';
/** One hostile message: what it is called, and its payloads (raw) or its value (sent by the client). */
type Hostile = ({ name: Name; value: unknown } | { name: Name; payloads: Payload[] }) & { heavy?: boolean };

let turnpike: TurnpikeHarness;
/** Reads the turns' histories: a page holding megabyte signals is larger than gRPC's default 4 MiB. */
let reader: Client;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  const connection = await Connection.connect({ address: inject('temporalAddress'), channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 } });
  reader = new Client({ connection, namespace: inject('temporalNamespace') });
});
afterAll(async () => {
  await reader?.connection.close();
  await turnpike?.stop();
});

/** The hostile messages for one turn: every megabyte field, deep nesting and undecodable kind first, then random ones. */
function hostileMessages(turn: ParkedTurn, stale: { approvalId: string; toolCallId: string }, next: () => number): { updates: Hostile[]; signals: Hostile[] } {
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  const open = turn.approvals[1];
  const decided = turn.approvals[0];
  const client = turn.clientCall.toolCallId;
  const mb = () => MARK + incompressible(1_000_000 + Math.floor(next() * 900_000));
  const junk = (): unknown => pick([null, 0, -1, 1e308, '', MARK.repeat(600), [], [1, [2]], { nested: { deeper: [null] } }, 'true', '\u0000', '<script>alert(1)</script>']);
  const megabyte: Array<[Name, () => unknown]> = [
    ['approveToolCall', () => ({ approvalId: mb(), approved: true, approver: 'bob' })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: false, approver: 'bob', reason: mb() })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: true, approver: mb() })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', approverGroups: ['ops', mb()] })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', inputHash: mb() })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', input: { target: mb(), count: 1 } })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', [mb()]: 1 })],
    ['approveToolCall', () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', note: mb() })],
    ['submitToolResult', () => ({ toolCallId: mb(), output: {} })],
    ['submitToolResult', () => ({ toolCallId: client, output: { colour: mb() } })],
    ['submitToolResult', () => ({ toolCallId: client, output: { colour: 'red' }, isError: mb() })],
    ['supersedeTurn', () => ({ reason: mb() })],
    ['supersedeTurn', () => ({ reason: 'a newer message', messageId: mb() })],
  ];
  const deep: Array<[Name, () => Payload[]]> = [
    ['approveToolCall', () => [payload('json/plain', `{"approvalId":"${open.approvalId}","approved":true,"approver":"bob","input":${deepJson(100_000)}}`)]],
    ['submitToolResult', () => [payload('json/plain', `{"toolCallId":"${client}","output":${deepJson(100_000)}}`)]],
    ['approveToolCall', () => [payload('json/plain', deepJson(100_000))]],
    ['supersedeTurn', () => [payload('json/plain', `{"reason":"x","extra":${deepJson(100_000)}}`)]],
  ];
  const decisions: Array<() => unknown> = [
    () => junk(),
    () => ({ approvalId: junk(), approved: true, approver: 'alice' }),
    () => ({ approvalId: open.approvalId, approved: junk(), approver: 'alice' }),
    () => ({ approvalId: `apr_${Math.floor(next() * 1e9)}`, approved: true, approver: 'alice' }),
    () => ({ approvalId: decided.approvalId, approved: pick([true, false]), approver: 'alice' }),
    () => ({ approvalId: stale.approvalId, approved: true, approver: 'alice' }),
    () => ({ approvalId: open.approvalId, approved: true, approver: pick(['mallory', '', undefined, 'ALICE', MARK]) }),
    () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', input: pick([{ target: 'x', count: 1 }, { target: 'valid', count: -5 }, 'string', null, { [MARK]: 1 }]) }),
    () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', inputHash: `sha256:${'0'.repeat(64)}` }),
    () => ({ approvalId: open.approvalId, approved: false, approver: 'bob', reason: MARK.repeat(600) }),
    () => ({ approvalId: client, approved: true, approver: 'alice' }),
    () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', approverGroups: Array.from({ length: 300 }, () => MARK) }),
  ];
  const results: Array<() => unknown> = [
    () => junk(),
    () => ({ toolCallId: junk(), output: {} }),
    () => ({ toolCallId: `call_${Math.floor(next() * 1e9)}`, output: { colour: 'red' } }),
    () => ({ toolCallId: open.toolCallId, output: { guarded: 'forged' } }),
    () => ({ toolCallId: stale.toolCallId, output: {} }),
    () => ({ toolCallId: client, output: pick([{ colour: 'purple' }, { colour: 1 }, {}, null, 'red', { colour: MARK }]) }),
    () => ({ toolCallId: client, output: { colour: 'red' }, isError: pick(['yes', 1, 0, null, {}, []]) }),
  ];
  const supersedes: Array<() => unknown> = [() => junk(), () => ({ reason: '' }), () => ({ reason: MARK.repeat(600) }), () => ({ messageId: 'm1' })];
  // Half by raw gRPC (JSON payloads, or payloads that do not decode), half by the client.
  const send = (name: Name, value: unknown): Hostile => (next() < 0.5 ? { name, value } : { name, payloads: [json(value)] });
  const undecodable = Object.values(UNDECODABLE);
  const fixed = (updates: boolean): Hostile[] => [
    ...megabyte.filter(([name]) => !updates || name !== 'supersedeTurn').map(([name, make]) => ({ ...send(name, make()), heavy: true })),
    ...deep.filter(([name]) => !updates || name !== 'supersedeTurn').map(([name, make]) => ({ name, payloads: make(), heavy: true })),
    ...undecodable.map((make, index): Hostile => ({ name: updates ? pick(['approveToolCall', 'submitToolResult']) : (['approveToolCall', 'submitToolResult', 'supersedeTurn'] as const)[index % 3], payloads: make() })),
  ];
  const randomOne = (updates: boolean): Hostile => {
    const name: Name = updates ? pick(['approveToolCall', 'submitToolResult']) : pick(['approveToolCall', 'submitToolResult', 'approveToolCall', 'submitToolResult', 'supersedeTurn']);
    return send(name, pick(name === 'approveToolCall' ? decisions : name === 'submitToolResult' ? results : supersedes)());
  };
  const fill = (fixedOnes: Hostile[], updates: boolean) => [...fixedOnes, ...Array.from({ length: MESSAGES_PER_TURN / 2 - fixedOnes.length }, () => randomOne(updates))];
  return { updates: fill(fixed(true), true), signals: fill(fixed(false), false) };
}

/** Sends one hostile update and returns its rejection, or 'accepted'. */
async function sendUpdate(turn: ParkedTurn, message: Hostile): Promise<{ type: string; message: string } | 'accepted'> {
  if ('payloads' in message) {
    const outcome = await rawUpdate(turnpike.client, turn.handle.workflowId, message.name, message.payloads);
    return outcome.accepted ? 'accepted' : outcome;
  }
  const error = await turn.handle.executeUpdate(message.name, { args: [message.value] }).then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof WorkflowUpdateFailedError)) return error ? { type: `not rejected: ${String(error)}`, message: '' } : 'accepted';
  const cause = error.cause as { type?: string; message?: string };
  return { type: cause.type ?? '?', message: cause.message ?? '' };
}

async function sendSignal(turn: ParkedTurn, message: Hostile): Promise<void> {
  if ('payloads' in message) await rawSignal(turnpike.client, turn.handle.workflowId, message.name, message.payloads);
  else await turn.handle.signal(message.name, message.value);
}

/** The most signals one workflow task of the turn handled. */
function mostSignalsInOneTask(events: Awaited<ReturnType<typeof historyOf>>['events']): number {
  let most = 0;
  let pending = 0;
  for (const event of events) {
    if (event.workflowExecutionSignaledEventAttributes) pending++;
    if (event.workflowTaskStartedEventAttributes) {
      most = Math.max(most, pending);
      pending = 0;
    }
  }
  return most;
}

describe('fuzzing parked turns with hostile payloads at scale', () => {
  it(`${TURNS * MESSAGES_PER_TURN} hostile signals and updates, megabyte fields included, on ${TURNS} parked turns: 0 failed workflow tasks, 0 accepted, state unchanged, every turn completes`, async () => {
    const finished = await turnpike.startTurn({ text: use('guarded_action', { target: 'stale', count: 1 }) });
    const [staleCall] = await waitForPending(finished);
    await finished.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: staleCall.approvalId!, approved: false, approver: 'bob' }] });
    await finished.result();
    const stale = { approvalId: staleCall.approvalId!, toolCallId: staleCall.toolCallId };

    const started = Date.now();
    const reports = await Promise.all(
      Array.from({ length: TURNS }, async (_, index) => {
        const turn = await parkTurn(turnpike);
        const [decided] = turn.approvals;
        await turn.handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: decided.approvalId!, approved: true, approver: 'alice' }] });
        const before = await waitForState(turn.handle, (state) => state.pending.length === 2 && executionsOf(turn.handle.workflowId).length === 1);
        const { updates, signals } = hostileMessages(turn, stale, random(20261125 + index));
        const types = new Map<string, number>();
        // Light signals go out 25 at once, so that one workflow task handles many of them. Heavy
        // ones (a megabyte, or nested 100,000 deep) go alone, each followed by an update whose
        // rejection says the task that handled it is over: signals that arrive while a workflow
        // task runs wait in the server's buffer, and past 2 MiB there the server itself fails
        // the running task to flush them (FORCE_CLOSE_COMMAND; see the README's signal paragraph).
        const heavy = signals.filter((signal) => signal.heavy);
        const light = signals.filter((signal) => !signal.heavy);
        for (const [i, update] of updates.entries()) {
          if (i % BURST === 0) await Promise.all(light.splice(0, BURST).map((signal) => sendSignal(turn, signal)));
          else if (heavy.length > 0) await sendSignal(turn, heavy.shift()!);
          const outcome = await sendUpdate(turn, update);
          expect(outcome, `${update.name} was accepted`).not.toBe('accepted');
          if (outcome === 'accepted') continue;
          expect(isRejectionType(outcome.type), outcome.type).toBe(true);
          expect(outcome.message.length).toBeGreaterThan(10);
          expect(outcome.message).not.toContain(MARK);
          types.set(outcome.type, (types.get(outcome.type) ?? 0) + 1);
        }
        for (const signal of heavy) await sendSignal(turn, signal);
        while (light.length > 0) await Promise.all(light.splice(0, BURST).map((signal) => sendSignal(turn, signal)));
        // Refused after every signal above is in history, so the task that refuses it handled them all.
        await sendUpdate(turn, { name: 'approveToolCall', value: { approvalId: 'apr_last', approved: true } });
        const history = await historyOf(reader.workflow.getHandle(turn.handle.workflowId));
        expect(history.failedTasks).toEqual([]);
        expect(history.acceptedUpdates).toBe(1);
        expect(history.signals).toBe(signals.length);
        expect(await turn.handle.query(turnStateQuery)).toEqual(before);
        await completeTurn(turn, [decided]);
        expect((await historyOf(reader.workflow.getHandle(turn.handle.workflowId))).failedTasks).toEqual([]);
        return { types, mostInOneTask: mostSignalsInOneTask(history.events) };
      }),
    );
    const types = new Map<string, number>();
    for (const report of reports) for (const [type, count] of report.types) types.set(type, (types.get(type) ?? 0) + count);
    expect([...types.keys()].sort()).toEqual(
      expect.arrayContaining(['ApprovalAlreadyDecided', 'ApproverNotAllowed', 'InputHashMismatch', 'InvalidEditedInput', 'InvalidRequest', 'InvalidToolOutput', 'NotAClientTool', 'PayloadTooLarge', 'UndecodablePayload', 'UnknownApprovalId', 'UnknownToolCallId']),
    );
    const mostInOneTask = Math.max(...reports.map((report) => report.mostInOneTask));
    expect(mostInOneTask).toBeGreaterThanOrEqual(5);
    console.log(`fuzz-scale: ${TURNS * MESSAGES_PER_TURN} hostile messages on ${TURNS} turns in ${Math.round((Date.now() - started) / 1000)} s; up to ${mostInOneTask} signals in one workflow task; rejections: ${JSON.stringify(Object.fromEntries(types))}`);
  }, 600_000);
});
