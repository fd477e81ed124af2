import { describe, expect, it } from 'vitest';
import { coalesceDeltas } from '../../activities/coalesce-deltas.js';
import { UiMessageChunkMapper } from '../../api/ui-message-chunks.js';
import { parseConversationCursor } from '../../client/conversation-events.js';
import type { TurnEvent } from '../../workflows/turn-events.js';

describe('coalesceDeltas', () => {
  const origin = { step: 1, attempt: 1 };
  it('merges neighbouring text of the same step and attempt, and keeps everything else apart and in order', () => {
    expect(
      coalesceDeltas([
        { type: 'text-delta', text: 'Hel', ...origin },
        { type: 'text-delta', text: 'lo', ...origin },
        { type: 'reasoning-delta', text: 'hm', ...origin },
        { type: 'tool-input-start', toolCallId: 'a', toolName: 't', ...origin },
        { type: 'tool-input-delta', toolCallId: 'a', inputTextDelta: '{"x"', ...origin },
        { type: 'tool-input-delta', toolCallId: 'a', inputTextDelta: ':1}', ...origin },
        { type: 'tool-input-delta', toolCallId: 'b', inputTextDelta: '{}', ...origin },
        { type: 'text-delta', text: '!', ...origin },
        { type: 'step-retry', step: 1, attempt: 2 },
        { type: 'text-delta', text: 'Hel', step: 1, attempt: 2 },
      ]),
    ).toEqual([
      { type: 'text-delta', text: 'Hello', ...origin },
      { type: 'reasoning-delta', text: 'hm', ...origin },
      { type: 'tool-input-start', toolCallId: 'a', toolName: 't', ...origin },
      { type: 'tool-input-delta', toolCallId: 'a', inputTextDelta: '{"x":1}', ...origin },
      { type: 'tool-input-delta', toolCallId: 'b', inputTextDelta: '{}', ...origin },
      { type: 'text-delta', text: '!', ...origin },
      { type: 'step-retry', step: 1, attempt: 2 },
      { type: 'text-delta', text: 'Hel', step: 1, attempt: 2 },
    ]);
  });

  it('never merges text of different attempts', () => {
    const merged = coalesceDeltas([
      { type: 'text-delta', text: 'a', step: 2, attempt: 1 },
      { type: 'text-delta', text: 'b', step: 2, attempt: 2 },
    ]);
    expect(merged).toHaveLength(2);
  });
});

describe('parseConversationCursor', () => {
  it('reads a conversation offset and an optional turn offset', () => {
    expect(parseConversationCursor('12')).toEqual({ conversationOffset: 12 });
    expect(parseConversationCursor('3.40')).toEqual({ conversationOffset: 3, turnOffset: 40 });
  });
  it('rejects anything else instead of starting over', () => {
    for (const bad of ['', '-1', '1.', 'a.1', '1.2.3', '1e3']) expect(() => parseConversationCursor(bad)).toThrow(/Invalid conversation stream cursor/);
  });
});

describe('UiMessageChunkMapper', () => {
  it('maps a step with a retried attempt, a tool call, an approval and its result to AI SDK chunks', () => {
    const mapper = new UiMessageChunkMapper();
    const events: TurnEvent[] = [
      { type: 'text-delta', text: 'Chec', step: 1, attempt: 1 },
      { type: 'step-retry', step: 1, attempt: 2 },
      { type: 'text-delta', text: 'Checking', step: 1, attempt: 2 },
      { type: 'step-finished', step: 1, finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: 1 },
      { type: 'tool-call', step: 1, toolCallId: 'c1', toolName: 't', input: { a: 1 } },
      { type: 'approval-requested', step: 1, approvalId: 'apr_1', toolCallId: 'c1', toolName: 't', input: { a: 1 }, inputHash: 'h', requestedAt: 'x', expiresAt: 'y', reason: 'big' },
      { type: 'tool-result', step: 1, toolCallId: 'c1', toolName: 't', outcome: 'denied', output: 'no', isError: true },
      { type: 'text-delta', text: 'Done', step: 2, attempt: 1 },
      { type: 'turn-finished', status: 'completed', text: 'Done', steps: 2, usage: { inputTokens: 2, outputTokens: 2 } },
    ];
    expect(events.flatMap((event) => mapper.map(event))).toEqual([
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1-1' },
      { type: 'text-delta', id: 'text-1-1', delta: 'Chec' },
      { type: 'reset-step' },
      { type: 'text-start', id: 'text-1-2' },
      { type: 'text-delta', id: 'text-1-2', delta: 'Checking' },
      { type: 'text-end', id: 'text-1-2' },
      { type: 'tool-input-available', toolCallId: 'c1', toolName: 't', input: { a: 1 } },
      { type: 'tool-approval-request', approvalId: 'apr_1', toolCallId: 'c1', reason: 'big' },
      { type: 'tool-output-denied', toolCallId: 'c1' },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-2-1' },
      { type: 'text-delta', id: 'text-2-1', delta: 'Done' },
      { type: 'text-end', id: 'text-2-1' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });
});
