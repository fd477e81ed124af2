/**
 * Merges neighbouring deltas of the same kind and origin into one event, so a batch published
 * from a model activity carries one text delta per stretch of text rather than one per token:
 * the stream's history grows with the number of batches, not tokens.
 */
import type { TurnEvent } from '../workflows/types/turn-events.js';

export function coalesceDeltas(events: readonly TurnEvent[]): TurnEvent[] {
  const merged: TurnEvent[] = [];
  for (const event of events) {
    const last = merged.at(-1);
    if (last && last.type === event.type && 'attempt' in last && 'attempt' in event && last.step === event.step && last.attempt === event.attempt) {
      if ((last.type === 'text-delta' || last.type === 'reasoning-delta') && (event.type === 'text-delta' || event.type === 'reasoning-delta')) {
        merged[merged.length - 1] = { ...last, text: last.text + event.text };
        continue;
      }
      if (last.type === 'tool-input-delta' && event.type === 'tool-input-delta' && last.toolCallId === event.toolCallId) {
        merged[merged.length - 1] = { ...last, inputTextDelta: last.inputTextDelta + event.inputTextDelta };
        continue;
      }
    }
    merged.push({ ...event });
  }
  return merged;
}
