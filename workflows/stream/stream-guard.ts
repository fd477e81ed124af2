/**
 * The checks of the event stream's publish signal and poll update (event-stream.ts), before
 * anything in them is used. Anybody who can signal a turn can send either, so:
 *
 * - a publish (`__temporal_workflow_stream_publish`) that does not decode, or has the wrong shape,
 *   or an item that is not one of turnpike's events, is logged and dropped as a whole: a turn's
 *   stream carries only what a turn's model activity publishes (activities/step-stream.ts);
 * - a poll (`__temporal_workflow_stream_poll`) that does not decode or has the wrong shape is
 *   rejected (`UndecodablePayload`, `InvalidRequest`).
 *
 * Limits: a publish carries at most 1,000 items, each at most 64 KiB of base64, 1 MiB together, so
 * no event can push a poll's answer (capped near 1 MB, but always with at least one item) much
 * past that; the publisher id is at most 200 characters.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { MAX_ID } from '../messages/field-limits.js';
import { decodePayloadWire } from './stream-wire.js';
import { TURN_EVENTS_TOPIC } from '../types/turn-events.js';

/** The stream's messages, by the names `@temporalio/workflow-streams` gave them. */
export const PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';
export const POLL_UPDATE = '__temporal_workflow_stream_poll';
export const OFFSET_QUERY = '__temporal_workflow_stream_offset';

export const MAX_PUBLISH_ITEMS = 1_000;
export const MAX_ITEM_CHARS = 64 * 1024;
export const MAX_PUBLISH_CHARS = 1024 * 1024;
const MAX_POLL_TOPICS = 16;

/** One event as it travels: its topic and its payload's wire form (stream-wire.ts). */
export interface PublishEntry {
  topic: string;
  data: string;
}

/** A publish signal's argument, once `publishProblem` found none. */
export interface PublishInput {
  items: PublishEntry[];
  /** Empty for a publisher that does not deduplicate. */
  publisher_id: string;
  sequence: number;
}

/** A poll update's argument, once `pollProblem` found none. */
export interface PollInput {
  topics: string[];
  from_offset: number;
}

/** A poll update's answer: the items from the offset asked for, and the offset to ask for next. */
export interface PollResult {
  items: WorkflowStreamWireItem[];
  next_offset: number;
  more_ready: boolean;
}

/** An item of a poll's answer: an event as it travels, and its offset. */
export interface WorkflowStreamWireItem extends PublishEntry {
  offset: number;
}

/** The stream's messages, typed: for callers (the workflow registers them on raw arguments). */
export const streamPublishSignal = defineSignal<[PublishInput]>(PUBLISH_SIGNAL);
export const streamPollUpdate = defineUpdate<PollResult, [PollInput]>(POLL_UPDATE);
export const streamOffsetQuery = defineQuery<number>(OFFSET_QUERY);

/** Why a publish cannot go into the stream, in turnpike's words (never quoting it), or undefined. */
export function publishProblem(input: unknown): string | undefined {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return 'it is not an object';
  const { items, publisher_id: publisherId, sequence } = input as Record<string, unknown>;
  if (publisherId !== undefined && publisherId !== null && publisherId !== '') {
    if (typeof publisherId !== 'string') return 'publisher_id is not a string';
    if (publisherId.length > MAX_ID) return `publisher_id is ${publisherId.length} characters long; the limit is ${MAX_ID}`;
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) return 'sequence is not a positive integer';
  }
  if (!Array.isArray(items)) return 'items is not a list';
  if (items.length > MAX_PUBLISH_ITEMS) return `it has ${items.length} items; the limit is ${MAX_PUBLISH_ITEMS}`;
  let total = 0;
  for (const [index, item] of items.entries()) {
    const { topic, data } = (item ?? {}) as Record<string, unknown>;
    if (topic !== TURN_EVENTS_TOPIC) return `items[${index}] is not on turnpike's topic`;
    if (typeof data !== 'string') return `items[${index}].data is not a string`;
    if (data.length > MAX_ITEM_CHARS) return `items[${index}].data is ${data.length} characters long; the limit is ${MAX_ITEM_CHARS}`;
    total += data.length;
    if (total > MAX_PUBLISH_CHARS) return `its items are more than ${MAX_PUBLISH_CHARS} characters together`;
    if (!isTurnpikeEvent(data)) return `items[${index}] is not a turnpike event`;
  }
  return undefined;
}

/** Whether `data` (base64 of a payload) decodes, as the stream's readers decode it, to an event: an object with a `type`. */
function isTurnpikeEvent(data: string): boolean {
  try {
    const event = defaultPayloadConverter.fromPayload<{ type?: unknown } | null>(decodePayloadWire(data));
    return typeof event === 'object' && event !== null && typeof event.type === 'string' && event.type.length <= MAX_ID;
  } catch {
    return false;
  }
}

export function pollProblem(input: unknown): string | undefined {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return 'it is not an object';
  const { topics, from_offset: fromOffset } = input as Record<string, unknown>;
  if (typeof fromOffset !== 'number' || !Number.isSafeInteger(fromOffset) || fromOffset < 0) return 'from_offset is not a non-negative integer';
  if (!Array.isArray(topics)) return 'topics is not a list';
  if (topics.length > MAX_POLL_TOPICS) return `topics has ${topics.length} entries; the limit is ${MAX_POLL_TOPICS}`;
  if (topics.some((topic) => typeof topic !== 'string' || topic.length > MAX_ID)) return `a topic is not a string of at most ${MAX_ID} characters`;
  return undefined;
}
