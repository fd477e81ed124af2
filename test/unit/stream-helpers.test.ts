import { describe, expect, it } from 'vitest';
import { coalesceDeltas } from '../../activities/coalesce-deltas.js';
import { parseConversationCursor } from '../../client/conversation-events.js';

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
