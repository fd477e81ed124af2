import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import { demoTools } from '../../demo/tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

describe('turnpike on a real Temporal dev server', () => {
  let turnpike: TurnpikeHarness;
  beforeAll(async () => {
    turnpike = await startTurnpike({ tools: demoTools });
  });
  afterAll(async () => turnpike?.stop());

  it('runs a model step and a server tool activity, then answers', async () => {
    const handle = await turnpike.startTurn({ text: 'look up order 1001' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.steps).toBe(2);
    expect(result.toolCalls).toEqual([
      expect.objectContaining({ toolName: 'lookup_order', outcome: 'executed', isError: false, output: expect.objectContaining({ item: 'Espresso machine' }) }),
    ]);
    expect(result.text).toContain('Espresso machine');
  });

  it('parks a call for approval and resumes on the approveToolCall update', async () => {
    const handle = await turnpike.startTurn({ text: 'refund $250 on order 1001' });
    const [pending] = await waitForPending(handle);
    expect(pending).toMatchObject({ kind: 'approval', toolName: 'issue_refund', input: { orderId: '1001', amount: 250 } });
    const accepted = await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    expect(accepted).toMatchObject({ approvalId: pending.approvalId, toolCallId: pending.toolCallId, approved: true });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approved: true, automatic: false, approver: 'alice' } });
  });
});
