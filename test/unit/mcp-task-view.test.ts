/** The mapping of a turn to an MCP task (api/mcp/mcp-task-view.ts), for every turn status. */
import { describe, expect, it } from 'vitest';
import { taskFrom, toolResultFrom } from '../../api/mcp/mcp-task-view.js';
import { TURN_STATUSES, type TurnStatus } from '../../workflows/types/turn-statuses.js';
import type { AgentTurnResult, PendingToolCall } from '../../workflows/types/index.js';

const times = { createdAt: new Date('2026-12-02T08:00:00Z'), closedAt: new Date('2026-12-02T08:05:00Z') };

function call(kind: PendingToolCall['kind'], extra: Partial<PendingToolCall> = {}): PendingToolCall {
  return { kind, toolCallId: `call-${kind}`, toolName: 'issue_refund', input: {}, inputHash: 'sha256:x', requestedAt: '2026-12-02T08:00:00Z', expiresAt: '2026-12-03T08:00:00Z', ...extra };
}

describe('a turn as an MCP task', () => {
  it('maps every turn status', () => {
    const expected: Record<TurnStatus, string> = {
      running: 'working',
      'awaiting-input': 'working',
      completed: 'completed',
      cancelled: 'cancelled',
      refused: 'failed',
      'max-steps': 'failed',
      'max-tokens': 'failed',
      'invalid-output': 'failed',
      'budget-exceeded': 'failed',
    };
    expect(Object.keys(expected).sort()).toEqual(Object.keys(TURN_STATUSES).sort());
    for (const [status, mapped] of Object.entries(expected)) {
      const task = taskFrom('mcp-desk-1', times, { status: status as TurnStatus, pending: [] }, 2_000);
      expect([status, task.status]).toEqual([status, mapped]);
    }
  });

  it('keeps an approval working with a message naming the call and whom it waits for, and a client tool or question input_required', () => {
    const approval = taskFrom('mcp-desk-1', { createdAt: times.createdAt }, { status: 'awaiting-input', pending: [call('approval', { approvalId: 'a-1', approvers: ['alice'], approverGroups: ['finance'] })] }, 2_000);
    expect(approval.status).toBe('working');
    expect(approval.statusMessage).toContain('issue_refund (call call-approval) waits for approval from alice or group finance until 2026-12-03T08:00:00Z');
    expect(approval.pollInterval).toBe(2_000);
    const question = taskFrom('mcp-desk-1', { createdAt: times.createdAt }, { status: 'awaiting-input', pending: [call('approval'), call('elicitation', { message: 'Which account?' })] }, 2_000);
    expect(question.status).toBe('input_required');
    expect(question.statusMessage).toContain('asks: Which account?');
  });

  it('says how an ended turn ended, and gives its answer as the tool result', () => {
    const failed = taskFrom('mcp-desk-1', times, { status: 'max-steps', pending: [] }, 2_000);
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'The turn ended max-steps.', lastUpdatedAt: '2026-12-02T08:05:00.000Z', ttl: null });
    expect(failed.pollInterval).toBeUndefined();
    const base = { messages: [], steps: 2, usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: [] } as unknown as AgentTurnResult;
    expect(toolResultFrom('t', { ...base, status: 'completed', text: 'done', output: { total: 3 } })).toMatchObject({ content: [{ type: 'text', text: 'done' }], structuredContent: { total: 3 } });
    expect(toolResultFrom('t', { ...base, status: 'completed', text: '[1]', output: [1] }).structuredContent).toBeUndefined();
    expect(toolResultFrom('t', { ...base, status: 'max-steps', text: 'partial' })).toMatchObject({ isError: true, content: [{ type: 'text', text: 'The turn ended max-steps. partial' }] });
  });
});
