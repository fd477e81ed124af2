/**
 * The order desk's own tests, written with `turnpike/testing`: its tools and approval policies on
 * Temporal's time-skipping test server, the model scripted step by step. Run with `npm test`
 * (node:test); no network, no API key, and a 24-hour approval expires in well under a second.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { call, createTestEnvironment, expectTurn, script, text, type TestEnvironment } from 'turnpike/testing';
import { orderDeskTools, refundsMade } from '../src/tools.js';
import { ORDER_DESK_WORKFLOWS } from './workflows-path.js';

const carrierLog = path.join(mkdtempSync(path.join(tmpdir(), 'order-desk-carrier-')), 'cancelled.txt');
let env: TestEnvironment;

before(async () => {
  const started = performance.now();
  env = await createTestEnvironment({
    tools: orderDeskTools,
    workflowsPath: ORDER_DESK_WORKFLOWS,
    mcpServers: {
      carrier: {
        command: process.execPath,
        args: [fileURLToPath(new URL('./carrier-mcp-server.js', import.meta.url))],
        env: { CARRIER_LOG: carrierLog },
        tools: { cancel_shipment: { approval: true, approvers: ['lead@orders.example'] } },
      },
    },
  });
  console.log(`environment-ms ${Math.round(performance.now() - started)}`);
});

after(async () => {
  await env?.teardown();
});

test('refunds up to $100 run at once; above, they wait for a lead', async () => {
  const small = await env.runTurn({ model: script([[call('issue_refund', { orderId: '1002', amount: 40 })], text('Refunded $40.')]), prompt: 'Refund $40 on 1002' });
  expectTurn(await small.result()).toHaveStatus('completed').toHaveDecision('issue_refund', { automatic: true, approved: true }).toHaveOneResultPerCall();
  assert.ok(refundsMade.some((refund) => refund.orderId === '1002' && refund.amount === 40));

  const large = await env.runTurn({
    model: script([[call('lookup_order', { orderId: '1001' })], [call('issue_refund', { orderId: '1001', amount: 250 })], text('Refunded $250.')]),
    prompt: 'Refund $250 on 1001',
  });
  const parked = await env.nextParked(large);
  assert.equal(parked.toolName, 'issue_refund');
  assert.equal(parked.reason, 'refunds above $100 need a lead');
  assert.ok(!refundsMade.some((refund) => refund.orderId === '1001'), 'the refund waits for the lead');
  await env.approve(parked, { approver: 'lead@orders.example' });
  expectTurn(await large.result())
    .toHaveOutcome('lookup_order', 'executed')
    .toHaveDecision('issue_refund', { outcome: 'approved', automatic: false, approver: 'lead@orders.example' })
    .toHaveSentModel('issue_refund', { output: { refunded: true, orderId: '1001', amount: 250 } })
    .toHaveOneResultPerCall();
  assert.equal(refundsMade.filter((refund) => refund.orderId === '1001').length, 1);
});

test('a denial and its reason reach the model, and nothing is refunded', async () => {
  const turn = await env.runTurn({ model: script([[call('issue_refund', { orderId: '1001', amount: 900 })], text('The lead said no.')]), prompt: 'Refund $900 on 1001' });
  await env.deny(await env.nextParked(turn), 'more than the order total', { approver: 'lead@orders.example' });
  expectTurn(await turn.result()).toHaveOutcome('issue_refund', 'denied').toHaveDecision('issue_refund', { outcome: 'denied', reason: 'more than the order total' });
  assert.match(JSON.stringify(turn.requests()[1]), /more than the order total/);
  assert.ok(!refundsMade.some((refund) => refund.amount === 900));
});

test('the customer answers a client tool', async () => {
  const turn = await env.runTurn({ model: script([[call('confirm_address', { orderId: '1001' })], text('Shipping to the confirmed address.')]), prompt: 'Ship 1001' });
  const parked = await env.nextParked(turn);
  assert.equal(parked.kind, 'client-tool');
  await env.submitToolResult(parked, { confirmed: true, address: '1 Main St' });
  expectTurn(await turn.result()).toHaveOutcome('confirm_address', 'client').toHaveSentModel('confirm_address', { output: { confirmed: true, address: '1 Main St' } });
});

test('an approval left for 25 hours expires at once, and the model is told', async () => {
  const turn = await env.runTurn({ model: script([[call('issue_refund', { orderId: '1001', amount: 300 })], text('The approval expired.')]), prompt: 'Refund $300 on 1001' });
  await env.nextParked(turn);
  const started = performance.now();
  await env.sleep('25h');
  const result = await turn.result();
  const wallMs = performance.now() - started;
  expectTurn(result).toHaveOutcome('issue_refund', 'expired').toHaveDecision('issue_refund', { outcome: 'expired' }).toHaveSentModel('issue_refund', { isError: true });
  assert.ok(wallMs < 2_000, `24 hours took ${Math.round(wallMs)} ms of wall time`);
  console.log(`expiry-wall-ms ${Math.round(wallMs)}`);
});

test("the carrier's MCP tool waits for a lead's approval before it cancels", async () => {
  const turn = await env.runTurn({
    model: script([[call('carrier__track_parcel', { shipmentId: 'S-7' })], [call('carrier__cancel_shipment', { shipmentId: 'S-7' })], text('Cancelled S-7.')]),
    prompt: 'Cancel shipment S-7',
  });
  const parked = await env.nextParked(turn);
  assert.equal(parked.toolName, 'carrier__cancel_shipment');
  assert.deepEqual(parked.approvers, ['lead@orders.example']);
  assert.equal(existsSync(carrierLog), false, 'nothing cancelled before the approval');
  await env.approve(parked, { approver: 'lead@orders.example' });
  expectTurn(await turn.result())
    .toHaveOutcome('carrier__track_parcel', 'executed')
    .toHaveDecision('carrier__cancel_shipment', { outcome: 'approved', approver: 'lead@orders.example' })
    .toHaveOneResultPerCall();
  assert.equal(readFileSync(carrierLog, 'utf8'), 'S-7\n');
});
