/**
 * What the live-delta tests compare: the text a person sees of a turn's events, whichever path
 * brought them (live pieces or the durable stream), so a test can say "every event once, in order".
 */
import { LIVE_DELTA_TYPES } from '../../activities/live-deltas.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';

/** `count` numbered words and a full stop: a model's text, one token a word. */
export const words = (count: number, stem: string) => Array.from({ length: count }, (_, index) => `${stem}${index}`).join(' ') + '.';

/** What a person sees: each step's text and each tool call's input as written, and every other event in order. */
export function shown(records: ReadonlyArray<{ event: TurnEvent }>): { texts: Record<number, string>; inputs: Record<string, string>; others: TurnEvent[] } {
  const texts: Record<number, string> = {};
  const inputs: Record<string, string> = {};
  const others: TurnEvent[] = [];
  for (const { event } of records) {
    if (event.type === 'text-delta') texts[event.step] = (texts[event.step] ?? '') + event.text;
    else if (event.type === 'tool-input-delta') inputs[event.toolCallId] = (inputs[event.toolCallId] ?? '') + event.inputTextDelta;
    else others.push(event);
  }
  return { texts, inputs, others };
}

/** Every record of a stream, to its end. */
export async function readAll<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const records: T[] = [];
  for await (const record of iterable) records.push(record);
  return records;
}

/** How many of `records` are not deltas: the durable stream's events a reader was shown. */
export function nonDeltaCount(records: ReadonlyArray<{ event: TurnEvent }>): number {
  return records.filter(({ event }) => !LIVE_DELTA_TYPES.has(event.type)).length;
}
