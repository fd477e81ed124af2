/**
 * Approval nudges: a webhook receiver on loopback, down for its first requests, gets the
 * parked, expiring and decided notifications of a turn — signed, Slack-compatible, and accepted
 * once each after Temporal retried the ones it refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approveToolCallUpdate, type agentTurn } from '../../client/index.js';
import { createWorker, signNotification } from '../../worker/index.js';
import type { AgentTurnInput } from '../../workflows/types/index.js';
import { noteStarted } from '../support/history-recorder.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const SECRET = 'webhook-secret';

interface Delivery {
  id: string;
  status: number;
  signed: boolean;
  body: { text: string; turnpike: { event: string; approvalId: string; toolName: string; outcome?: string; approver?: string } };
}

const deliveries: Delivery[] = [];
let refuseNext = 2;
let receiver: http.Server;
let harness: TurnpikeHarness;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `nudges-${randomUUID()}`;

beforeAll(async () => {
  receiver = http.createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      const timestamp = String(request.headers['x-turnpike-timestamp']);
      const signed = request.headers['x-turnpike-signature'] === signNotification(SECRET, timestamp, raw);
      // Down for its first requests: Temporal must retry them.
      const status = refuseNext > 0 ? 503 : 200;
      if (refuseNext > 0) refuseNext--;
      deliveries.push({ id: String(request.headers['x-turnpike-delivery']), status, signed, body: JSON.parse(raw) });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  harness = await startTurnpike({ tools: testTools });
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  worker = await createWorker({
    tools: testTools,
    taskQueue,
    connection,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    notifications: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: SECRET, expiringBefore: '2s' },
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await harness?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

async function startTurn(text: string, approvalTimeout: string, more: Partial<AgentTurnInput> = {}) {
  const input: AgentTurnInput = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: text }], approvalTimeout, ...more };
  const handle = await harness.client.workflow.start<typeof agentTurn>('agentTurn', { taskQueue, workflowId: `nudged-${randomUUID()}`, args: [input] });
  noteStarted(handle);
  return handle;
}

/** The accepted deliveries of one approval, by event. */
function accepted(approvalId: string): Map<string, Delivery[]> {
  const byEvent = new Map<string, Delivery[]>();
  for (const delivery of deliveries.filter((entry) => entry.status === 200 && entry.body.turnpike.approvalId === approvalId)) {
    byEvent.set(delivery.body.turnpike.event, [...(byEvent.get(delivery.body.turnpike.event) ?? []), delivery]);
  }
  return byEvent;
}

describe('approval nudges', () => {
  it('sends parked, expiring and decided, signed, once each, after retrying a receiver that was down', async () => {
    const handle = await startTurn(use('guarded_action', { target: 'nudged', count: 1 }), '5s');
    const [pending] = await waitForPending(handle);
    // The expiring nudge goes out 2 s before the 5 s approval timeout.
    await expect.poll(() => accepted(pending.approvalId!).has('expiring'), { timeout: 15_000, interval: 200 }).toBe(true);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved' });

    const byEvent = accepted(pending.approvalId!);
    expect([...byEvent.keys()].sort()).toEqual(['decided', 'expiring', 'parked']);
    for (const [, list] of byEvent) expect(list).toHaveLength(1);
    expect(byEvent.get('decided')![0].body.turnpike).toMatchObject({ outcome: 'approved', approver: 'alice', toolName: 'guarded_action' });
    expect(byEvent.get('parked')![0].body.text).toContain('Approval needed: guarded_action');
    const mine = deliveries.filter((delivery) => delivery.body.turnpike.approvalId === pending.approvalId);
    expect(mine.every((delivery) => delivery.signed)).toBe(true);
    // The receiver refused its first two requests; each delivery id was retried until accepted.
    expect(mine.filter((delivery) => delivery.status === 503)).toHaveLength(2);
    expect(new Set(mine.map((delivery) => delivery.id))).toEqual(new Set(['parked', 'expiring', 'decided'].map((event) => `${handle.workflowId}/${pending.approvalId}/${event}`)));
  });

  it('tells approvers when an approval expired without a decision', async () => {
    const handle = await startTurn(use('guarded_action', { target: 'nudged-expiry', count: 1 }), '3s');
    const [pending] = await waitForPending(handle);
    expect((await handle.result()).toolCalls[0]).toMatchObject({ outcome: 'expired' });
    const byEvent = accepted(pending.approvalId!);
    expect(byEvent.get('decided')?.map((delivery) => delivery.body.turnpike.outcome)).toEqual(['expired']);
    expect(byEvent.get('expiring')).toHaveLength(1);
  });

  it('nudges approvers about a budget approval as about a tool approval', async () => {
    const handle = await startTurn('look up order 1001 then look up order 1002', '1h', { budget: { totalTokens: 30 } });
    const [pending] = await waitForPending(handle);
    expect(pending.kind).toBe('budget');
    await expect.poll(() => accepted(pending.approvalId!).has('parked'), { timeout: 15_000, interval: 200 }).toBe(true);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: false, approver: 'alice' }] });
    expect((await handle.result()).status).toBe('budget-exceeded');
    const byEvent = accepted(pending.approvalId!);
    expect(byEvent.get('parked')![0].body.turnpike).toMatchObject({ toolName: 'turnpike_budget' });
    expect(byEvent.get('decided')![0].body.turnpike).toMatchObject({ outcome: 'denied', approver: 'alice', toolName: 'turnpike_budget' });
  });
});
