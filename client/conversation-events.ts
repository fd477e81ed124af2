/**
 * A conversation's events: its own stream says which turn started when; each turn's events
 * are read from the turn's stream in between. One cursor covers both, so a reader that
 * resumes after the cursor of the last event it saw loses and repeats nothing, across the
 * conversation's continue-as-new too.
 *
 * Cursor: `"<c>"` for the conversation's own event at offset `c`, `"<c>.<t>"` for the event at
 * offset `t` of the turn that the conversation's event `c` (its `turn-started`) started.
 */
import type { QueryDefinition } from '@temporalio/client';
import { conversationEventsQuery, turnEventsQuery } from '../workflows/messages/definitions.js';
import type { ConversationEvent, StreamEventsPage, StreamEventsRequest, TurnEvent } from '../workflows/types/turn-events.js';
import type { StreamReadOptions } from './event-subscription.js';

/** Reads one workflow's event stream (`StreamHub.read`, or `readEventStream` with a client). */
export type StreamReader = <E>(
  workflowId: string,
  query: QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>,
  options: StreamReadOptions<E>,
) => AsyncGenerator<{ offset: number; event: E }, void, undefined>;

/** One event of a conversation's stream, with the cursor to resume after it. */
export interface ConversationStreamEvent {
  /** Pass as `after` to resume after this event. */
  cursor: string;
  /** The turn the event belongs to. */
  turnId: string;
  /** Offset in the turn's own stream, for the turn's events; absent for the conversation's. */
  turnOffset?: number;
  event: TurnEvent | ConversationEvent;
}

/** Parses a cursor; throws on anything else, so a bad `Last-Event-ID` is an error, not a replay from 0. */
export function parseConversationCursor(cursor: string): { conversationOffset: number; turnOffset?: number } {
  const match = /^(\d{1,15})(?:\.(\d{1,15}))?$/.exec(cursor);
  if (!match) throw new Error(`Invalid conversation stream cursor "${cursor}": expected "<offset>" or "<offset>.<offset>"`);
  return { conversationOffset: Number(match[1]), ...(match[2] !== undefined ? { turnOffset: Number(match[2]) } : {}) };
}

export async function* readConversationEvents(
  readEventStream: StreamReader,
  conversationId: string,
  options: { after?: string; signal?: AbortSignal } = {},
): AsyncGenerator<ConversationStreamEvent, void, undefined> {
  const resume = options.after !== undefined ? parseConversationCursor(options.after) : undefined;
  const { signal } = options;
  for await (const { offset, event } of readEventStream(conversationId, conversationEventsQuery, {
    fromOffset: resume?.conversationOffset ?? 0,
    signal,
  })) {
    const resuming = resume !== undefined && offset === resume.conversationOffset;
    // The event the cursor names was seen already, unless the cursor is inside its turn.
    if (!resuming) yield { cursor: String(offset), turnId: event.turnId, event };
    if (event.type !== 'turn-started') continue;
    const fromOffset = resuming && resume.turnOffset !== undefined ? resume.turnOffset + 1 : 0;
    for await (const turn of readEventStream(event.turnId, turnEventsQuery, {
      fromOffset,
      isLast: (turnEvent) => turnEvent.type === 'turn-finished',
      signal,
    })) {
      yield { cursor: `${offset}.${turn.offset}`, turnId: event.turnId, turnOffset: turn.offset, event: turn.event };
    }
    if (signal?.aborted) return;
  }
}
