/**
 * The order desk's own workflow (`refundOrder`, which runs an agent turn as a child) tested with
 * `turnpike/testing`, on the app's workflows file: the test waits for the child turn's parked call
 * by its id right after starting the order, and decides it. And one clock for every turn: awaiting
 * a turn's result moves the clock only as far as that turn needs, so another turn's call stays
 * parked. Run by `npm test`, in a process of its own beside test/order-desk.test.ts: both reuse
 * one bundle of src/workflows.ts (bundled once, kept on disk).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkerPlugin } from '@temporalio/worker';
import { call, createTestEnvironment, expectTurn, script, text, type TestEnvironment } from 'turnpike/testing';
import * as activities from '../src/activities.js';
import { agentTurnId, refundOrder } from '../src/order-workflow.js';
import { orderDeskTools } from '../src/tools.js';
import { ORDER_DESK_WORKFLOWS } from './workflows-path.js';

/** The app's own activities, beside turnpike's, as its worker registers them. */
const orderDeskActivities: WorkerPlugin = {
  name: 'order-desk-activities',
  configureWorker: (options) => ({ ...options, activities: { ...options.activities, ...activities } }),
};

let env: TestEnvironment;

before(async () => {
  const started = performance.now();
  env = await createTestEnvironment({ tools: orderDeskTools, workflowsPath: ORDER_DESK_WORKFLOWS, workerOptions: { plugins: [orderDeskActivities] } });
  console.log(`environment-ms ${Math.round(performance.now() - started)}`);
});

after(async () => {
  await env?.teardown();
});

test("the order workflow's child turn: nextParked waits for it to start and park, and the order completes once approved", async () => {
  const orderId = `order-1001-${Date.now()}`;
  const order = await env.temporal.client.workflow.start(refundOrder, {
    taskQueue: 'turnpike-test',
    workflowId: orderId,
    args: [{ orderId: '1001', request: 'Refund $250 on 1001', model: script([[call('issue_refund', { orderId: '1001', amount: 250 })], text('Refunded $250.')]).model }],
  });
  // Right after the start: the child turn does not exist yet.
  const parked = await env.nextParked(agentTurnId(orderId));
  assert.equal(parked.toolName, 'issue_refund');
  await env.approve(parked, { approver: 'lead@orders.example' });
  const outcome = await order.result();
  assert.deepEqual({ refunded: outcome.refunded, approvedBy: outcome.approvedBy, turnStatus: outcome.turnStatus }, { refunded: true, approvedBy: 'lead@orders.example', turnStatus: 'completed' });
  assert.ok(activities.sentNotices.includes('1001: Your refund is on its way.'));
});

test('awaiting a turn moves the clock to its own expiry only: a call parked for 24 hours in another turn stays parked', async () => {
  const waiting = await env.runTurn({ model: script([[call('issue_refund', { orderId: '1001', amount: 500 })], text('Refunded $500.')]), prompt: 'Refund $500 on 1001' });
  const waitingCall = await env.nextParked(waiting);
  const before = await env.temporal.currentTimeMs();
  const stillParked = async () => assert.deepEqual((await waiting.state()).pending.map((pending) => pending.toolCallId), [waitingCall.toolCallId], 'the 24-hour call is still parked');

  // A turn that parks nothing: awaiting it moves the clock not at all.
  const quick = await env.runTurn({ model: script([[call('issue_refund', { orderId: '1002', amount: 40 })], text('Refunded $40.')]), prompt: 'Refund $40 on 1002' });
  expectTurn(await quick.result()).toHaveStatus('completed');
  assert.ok((await env.temporal.currentTimeMs()) - before < 3_600_000, 'the clock stood still');
  await stillParked();

  // A turn whose 1-hour approval is left undecided: the clock moves to its expiry, and no further.
  const hourly = await env.runTurn({
    model: script([[call('issue_refund', { orderId: '1001', amount: 300 })], text('The approval expired.')]),
    prompt: 'Refund $300 on 1001',
    approvalTimeout: '1h',
  });
  await env.nextParked(hourly);
  expectTurn(await hourly.result()).toHaveOutcome('issue_refund', 'expired');
  const skippedMs = (await env.temporal.currentTimeMs()) - before;
  assert.ok(skippedMs >= 3_600_000 && skippedMs < 3 * 3_600_000, `the clock moved ${skippedMs} ms for a 1-hour expiry`);
  await stillParked();

  await env.approve(waitingCall, { approver: 'lead@orders.example' });
  const result = await waiting.result();
  expectTurn(result).toHaveDecision('issue_refund', { outcome: 'approved', approver: 'lead@orders.example' });
  const decidedAt = Date.parse(result.toolCalls.find((record) => record.toolName === 'issue_refund')!.approval!.decidedAt);
  assert.ok(decidedAt - before < 24 * 3_600_000, `decided at ${new Date(decidedAt).toISOString()}, more than a day after ${new Date(before).toISOString()}`);
});
