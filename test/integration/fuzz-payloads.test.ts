/**
 * Payloads a parked turn cannot read, and megabyte fields, sent by raw gRPC and by the client.
 * Temporal cannot refuse a signal: it is in the turn's history before the turn sees it, so the
 * turn must cope. No such payload fails a workflow task; an update carrying one is rejected
 * with a typed reason; nothing of what the turn refuses travels back out of it (except the copy
 * of a rejected update's request that the SDK itself returns, bounded by the server's in-flight
 * update limit); and the turn still completes after valid decisions.
 */
import { randomUUID } from 'node:crypto';
import { Connection, Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { createWorker } from '../../worker/create-worker.js';
import { approveToolCallSignal, approveToolCallUpdate, callContextQuery, turnEventsQuery, turnStateQuery } from '../../workflows/messages/definitions.js';
import { startByteCountingProxy } from '../support/byte-counting-proxy.js';
import { encodePayloadWire } from '../../workflows/stream/stream-wire.js';
import { UNDECODABLE, incompressible, json, payload, rawSignal, rawUpdate } from '../support/hostile-payloads.js';
import { completeTurn, historyOf, parkTurn } from '../support/parked-turn.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const SIGNALS = ['approveToolCall', 'submitToolResult', 'supersedeTurn', '__temporal_workflow_stream_publish'];
const UPDATES = ['approveToolCall', 'submitToolResult', '__temporal_workflow_stream_poll'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let turnpike: TurnpikeHarness;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
});
afterAll(async () => turnpike?.stop());

describe('payloads a turn cannot decode', () => {
  it(`${Object.keys(UNDECODABLE).length} kinds, each as every signal and update of a parked turn: dropped or rejected, 0 failed workflow tasks, state unchanged, and the turn completes`, async () => {
    const outcomes = await Promise.all(
      Object.entries(UNDECODABLE).map(async ([kind, payloads]) => {
        const turn = await parkTurn(turnpike);
        const before = await turn.handle.query(turnStateQuery);
        for (const name of SIGNALS) await rawSignal(turnpike.client, turn.handle.workflowId, name, payloads());
        // Sent after the signals are in history, so the workflow task that refuses them handled the signals first.
        const rejections = await Promise.all(UPDATES.map((name) => rawUpdate(turnpike.client, turn.handle.workflowId, name, payloads())));
        const history = await historyOf(turn.handle);
        expect(history.failedTasks, kind).toEqual([]);
        expect(history.acceptedUpdates, kind).toBe(0);
        expect(await turn.handle.query(turnStateQuery), kind).toEqual(before);
        await completeTurn(turn);
        return [kind, rejections.map((outcome) => (outcome.accepted ? 'accepted' : outcome.type))] as const;
      }),
    );
    for (const [kind, types] of outcomes) {
      // The good first argument of the last kind is read (its undecodable second one never is) and refused on its merits.
      const expected = kind.startsWith('a good first argument') ? ['UnknownApprovalId', 'InvalidRequest', 'InvalidRequest'] : ['UndecodablePayload', 'UndecodablePayload', 'UndecodablePayload'];
      expect(types, kind).toEqual(expected);
    }
  });

  it('the event stream refuses what its library cannot take, and shows none of it', async () => {
    const turn = await parkTurn(turnpike);
    const { workflowId } = turn.handle;
    const forged = encodePayloadWire(json({ type: 'approval-requested', approvalId: 'apr_forged' }));
    const junk = [{}, { items: 'x' }, { items: [{ topic: 'turnpike', data: '!!!' }] }, { items: [{ topic: 'elsewhere', data: forged }] }, { items: [{ topic: 'turnpike', data: forged }, { topic: 'turnpike', data: incompressible(1_500_000) }] }];
    for (const publish of junk) {
      await rawSignal(turnpike.client, workflowId, '__temporal_workflow_stream_publish', [json(publish)]);
    }
    const polls = await Promise.all([{}, { from_offset: 0 }, { topics: ['turnpike'], from_offset: -1 }, { topics: 'turnpike', from_offset: 0 }].map((poll) => rawUpdate(turnpike.client, workflowId, '__temporal_workflow_stream_poll', [json(poll)])));
    expect(polls.map((outcome) => (outcome.accepted ? 'accepted' : outcome.type))).toEqual(['InvalidRequest', 'InvalidRequest', 'InvalidRequest', 'InvalidRequest']);
    // A good poll still works.
    expect(await rawUpdate(turnpike.client, workflowId, '__temporal_workflow_stream_poll', [json({ topics: ['turnpike'], from_offset: 0 })])).toEqual({ accepted: true });
    const { events } = await turn.handle.query(turnEventsQuery, {});
    expect(events.filter(({ event }) => event.type === 'approval-requested').map(({ event }) => event.type === 'approval-requested' && event.approvalId).sort()).toEqual(turn.approvals.map((call) => call.approvalId).sort());
    const history = await historyOf(turn.handle);
    expect(history.failedTasks).toEqual([]);
    await completeTurn(turn);
    expect((await historyOf(turn.handle)).failedTasks).toEqual([]);
  });
});

describe('megabyte fields', () => {
  it('8 1.1 MB updates on one turn, one after another, are all refused by field and size, with 0 failed workflow tasks', async () => {
    const turn = await parkTurn(turnpike);
    const before = await turn.handle.query(turnStateQuery);
    const [approval] = turn.approvals;
    const marker = `MARK${randomUUID()}`;
    const errors: unknown[] = [];
    for (let i = 0; i < 8; i++) {
      errors.push(
        await turn.handle
          .executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approval.approvalId!, approved: false, approver: 'bob', reason: marker + incompressible(1_100_000) }] })
          .then(() => undefined, (error: unknown) => error),
      );
    }
    for (const error of errors) {
      expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
      const cause = (error as WorkflowUpdateFailedError).cause as { type?: string; message?: string };
      expect(cause.type).toBe('PayloadTooLarge');
      expect(cause.message).toMatch(/^approveToolCall\.reason is \d{7} characters long; the limit is 4000$/);
    }
    // A query's failure is answered inside a workflow task's completion when one runs: it names the field, not the value.
    await expect(turn.handle.query(callContextQuery, { toolCallId: marker + incompressible(1_500_000) })).rejects.toThrow(/^callContext\.toolCallId is \d{7} characters long; the limit is 200$/);
    expect((await historyOf(turn.handle)).failedTasks).toEqual([]);
    expect(await turn.handle.query(turnStateQuery)).toEqual(before);
    await completeTurn(turn);
  });

  it('8 concurrent 1.1 MB updates on one turn are none accepted, change nothing, and the turn completes', async () => {
    // At Temporal's default limits (20 MiB of update requests in flight per workflow) the SDK's
    // copy of each request in the task's completion can pass gRPC's 4 MiB while they are in
    // flight, and that task fails until they are refused: the turn recovers, nothing is lost.
    const turn = await parkTurn(turnpike);
    const before = await turn.handle.query(turnStateQuery);
    const [approval] = turn.approvals;
    const errors = await Promise.all(
      Array.from({ length: 8 }, () =>
        turn.handle
          .executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approval.approvalId!, approved: false, approver: 'bob', reason: incompressible(1_100_000) }] })
          .then(() => undefined, (error: unknown) => error),
      ),
    );
    // None is accepted: each is refused by the turn, or fails with the workflow task the burst
    // failed (the server then fails the updates that task carried).
    const outcomes = errors.map((error) =>
      error instanceof WorkflowUpdateFailedError ? ((error.cause as { type?: string }).type ?? 'untyped') : `${(error as Error)?.constructor?.name}: ${(error as Error)?.message}`,
    );
    console.log(`8 concurrent 1.1 MB updates: ${JSON.stringify(outcomes)}`);
    expect(errors.every((error) => error !== undefined)).toBe(true);
    expect(outcomes.every((outcome) => outcome === 'PayloadTooLarge' || outcome.startsWith('ServiceError'))).toBe(true);
    // The turn answers again once the burst is gone, as it was.
    const started = Date.now();
    let after: unknown;
    while (Date.now() - started < 120_000) {
      after = await turn.handle.query(turnStateQuery).catch(() => undefined);
      if (after) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    console.log(`8 concurrent 1.1 MB updates: the turn answered again after ${Date.now() - started} ms`);
    expect(after).toEqual(before);
    // turnpike's own client refuses such a message before it is sent: no update reaches the turn.
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
    const updatesBefore = (await turn.handle.describe()).raw.workflowExecutionInfo?.historyLength;
    await expect(client.approveToolCall(turn.handle.workflowId, { approvalId: approval.approvalId!, approved: false, reason: incompressible(1_100_000) })).rejects.toMatchObject({
      type: 'PayloadTooLarge',
      message: expect.stringMatching(/^approveToolCall\.reason is \d{7} characters long; the limit is 4000$/),
    });
    expect((await turn.handle.describe()).raw.workflowExecutionInfo?.historyLength).toEqual(updatesBefore);
    console.log(`8 concurrent 1.1 MB updates: ${(await historyOf(turn.handle)).failedTasks.length} failed workflow tasks during the burst`);
    await completeTurn(turn);
  });

  it("nothing of a refused message travels back to the server but the SDK's one copy of a rejected update's request", async () => {
    // A worker of its own, connected through a proxy that counts what it sends.
    const proxy = await startByteCountingProxy(inject('temporalAddress'));
    const taskQueue = `bytes-${randomUUID()}`;
    const native = await NativeConnection.connect({ address: proxy.address });
    const worker = await createWorker({ tools: testTools, taskQueue, connection: native, namespace: inject('temporalNamespace'), workflowBundle: { codePath: inject('workflowBundlePath') } });
    const running = worker.run();
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    // No codec: the payloads reach the worker as large as they are sent.
    const plain = new Client({ connection, namespace: inject('temporalNamespace') });
    try {
      const handle = await plain.workflow.start('agentTurn', {
        taskQueue,
        workflowId: `turn-${randomUUID()}`,
        args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: 'use guarded_action with {"target":"alpha","count":1}' }] }],
      });
      const turnpikeHandle = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter }).workflow.getHandle(handle.workflowId);
      let approvalId: string | undefined;
      while (!approvalId) {
        approvalId = (await turnpikeHandle.query(turnStateQuery).catch(() => undefined))?.pending[0]?.approvalId;
        await sleep(100);
      }
      const sentWhile = async (send: () => Promise<unknown>) => {
        await sleep(500);
        const before = proxy.sent.up;
        await send();
        await sleep(1_500);
        return proxy.sent.up - before;
      };
      const field = () => incompressible(1_000_000);
      const refusedUpdate = await sentWhile(() => handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approvalId!, approved: false, approver: 'bob', reason: field() }] }).catch(() => undefined));
      const unknownId = await sentWhile(() => handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: 'apr_unknown', approved: false, approver: 'bob', unknownField: field() } as never] }).catch(() => undefined));
      const refusedSignal = await sentWhile(() => handle.signal(approveToolCallSignal, { approvalId: approvalId!, approved: false, approver: 'bob', reason: field() }));
      const undecodableSignal = await sentWhile(() => rawSignal(plain, handle.workflowId, 'approveToolCall', [payload('json/plain', `{"approvalId": NaN, "reason": "${field()}"`)]));
      console.log(`bytes the worker sent back: refused 1 MB update ${refusedUpdate}, 1 MB unknown field ${unknownId}, refused 1 MB signal ${refusedSignal}, undecodable 1 MB signal ${undecodableSignal}`);
      // The SDK returns a rejected update's request with the rejection: one copy, no more. The
      // worker's gRPC channel compresses it, and random base64 compresses to its 6 bits a
      // character: one copy of the 1 MB field is ~750 KB on the wire, two would be ~1.5 MB.
      for (const sent of [refusedUpdate, unknownId]) {
        expect(sent).toBeGreaterThan(700_000);
        expect(sent).toBeLessThan(850_000);
      }
      // A signal is never sent back: what the turn sends is a few hundred bytes of workflow task completion.
      expect(refusedSignal).toBeLessThan(16_000);
      expect(undecodableSignal).toBeLessThan(16_000);
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approvalId!, approved: true, approver: 'bob' }] });
      expect((await turnpikeHandle.result()).status).toBe('completed');
      expect((await historyOf(handle)).failedTasks).toEqual([]);
    } finally {
      worker.shutdown();
      await running;
      await native.close();
      await connection.close();
      await proxy.close();
    }
  });
});
