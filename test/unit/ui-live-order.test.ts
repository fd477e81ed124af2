/**
 * `/api/chat`'s order of a live read (api/ui-live-order.ts): a new step's live deltas wait only
 * while the step before it has streamed here without its end and tool calls read; everything
 * else passes at once, in the order read, and nothing is dropped or repeated.
 */
import { describe, expect, it } from 'vitest';
import { LiveStepOrder } from '../../api/ui-live-order.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';

const usage = { inputTokens: 1, outputTokens: 1 };
const text = (step: number, value: string): TurnEvent => ({ type: 'text-delta', text: value, step, attempt: 1 });
const finished = (step: number, toolCalls: number): TurnEvent => ({ type: 'step-finished', step, finishReason: toolCalls > 0 ? 'tool-calls' : 'stop', usage, toolCalls });
const call = (step: number, id: string): TurnEvent => ({ type: 'tool-call', step, toolCallId: id, toolName: 't', input: {} });
const result = (step: number, id: string): TurnEvent => ({ type: 'tool-result', step, toolCallId: id, toolName: 't', outcome: 'executed', output: 'ok', isError: false });

/** The events passed after each record, as short labels; `before`: records an earlier response of the message showed. */
function run(records: Array<[number, TurnEvent]>, before: Array<[number, TurnEvent]> = []): string[][] {
  const order = new LiveStepOrder();
  for (const [offset, event] of before) order.showedBefore({ offset, event });
  const label = (event: TurnEvent) => `${event.type}${'step' in event ? `@${event.step}` : ''}${event.type === 'text-delta' ? `:${event.text}` : ''}`;
  return records.map(([offset, event]) => order.push({ offset, event }).map(label));
}

describe('LiveStepOrder', () => {
  it("passes the first step's live deltas at once, and holds the next step's until the step before it shows its end and every call", () => {
    expect(
      run([
        [-1, text(1, 'a')],
        [-1, text(2, 'b')],
        [0, text(1, 'a')], // a durable remainder of step 1: before the held step 2, in order
        [1, finished(1, 2)],
        [2, call(1, 'c1')],
        [2, text(2, 'c')],
        [3, call(1, 'c2')],
        [4, result(1, 'c1')],
      ]),
    ).toEqual([['text-delta@1:a'], [], ['text-delta@1:a'], ['step-finished@1'], ['tool-call@1'], [], ['tool-call@1', 'text-delta@2:b', 'text-delta@2:c'], ['tool-result@1']]);
  });

  it('passes a new step at once when the step before it settled first, and holds nothing for a step that made no call', () => {
    expect(run([[-1, text(1, 'a')], [0, finished(1, 0)], [0, text(2, 'b')]])).toEqual([['text-delta@1:a'], ['step-finished@1'], ['text-delta@2:b']]);
    expect(run([[-1, text(1, 'a')], [0, finished(1, 1)], [1, call(1, 'c1')], [1, text(2, 'b')]])).toEqual([['text-delta@1:a'], ['step-finished@1'], ['tool-call@1'], ['text-delta@2:b']]);
  });

  it("releases what it holds before a later step's durable event or the turn's end", () => {
    expect(run([[-1, text(1, 'a')], [-1, text(2, 'b')], [0, text(2, 'c')]])).toEqual([['text-delta@1:a'], [], ['text-delta@2:b', 'text-delta@2:c']]);
    const end: TurnEvent = { type: 'turn-finished', status: 'completed', text: 'ab', steps: 2, usage };
    expect(run([[-1, text(1, 'a')], [-1, text(2, 'b')], [0, end]])).toEqual([['text-delta@1:a'], [], ['text-delta@2:b', 'turn-finished']]);
  });

  it("holds nothing in a response that joined after the step's end (a chat continued after an approval)", () => {
    expect(run([[7, result(1, 'c1')], [7, text(2, 'b')]])).toEqual([['tool-result@1'], ['text-delta@2:b']]);
    expect(run([[-1, text(2, 'b')], [7, result(1, 'c1')]])).toEqual([['text-delta@2:b'], ['tool-result@1']]);
  });

  it("holds a later step's deltas in a continued response until the step it joins shows the calls it counts, read before or after its offset", () => {
    const approval: TurnEvent = { type: 'approval-requested', step: 1, approvalId: 'a1', toolCallId: 'c1', toolName: 't', input: {}, inputHash: 'h', requestedAt: 'x', expiresAt: 'y' };
    // The earlier response showed step 1's text, its end (two calls) and its first call, then parked.
    const before: Array<[number, TurnEvent]> = [[0, text(1, 'a')], [1, finished(1, 2)], [2, call(1, 'c1')], [3, approval]];
    // The next step's first live piece repeats the last durable offset, 3: it waits for the second call.
    expect(run([[3, text(2, 'b')], [4, call(1, 'c2')], [5, result(1, 'c2')]], before)).toEqual([[], ['tool-call@1', 'text-delta@2:b'], ['tool-result@1']]);
    // Every call shown before the offset: the next step's first token passes at once.
    expect(run([[3, text(2, 'b')], [4, result(1, 'c1')]], [[0, text(1, 'a')], [1, finished(1, 1)], [2, call(1, 'c1')], [3, approval]])).toEqual([['text-delta@2:b'], ['tool-result@1']]);
  });
});
