/**
 * The event stream's publish signal and poll update, checked before `@temporalio/workflow-streams`
 * sees them. The library trusts both: `{}` as a publish fails the workflow task on
 * `input.items is not iterable` (and every retry of it, for good), and a poll without `topics`
 * waits until the turn ends and then fails the task that would end it. Anybody who can signal a
 * turn can send either, so the turn re-registers both handlers on raw arguments
 * (`raw-messages.ts`) and hands the library only what it can take:
 *
 * - a publish (`__temporal_workflow_stream_publish`) that does not decode, or has the wrong shape,
 *   or an item that is not one of turnpike's events, is logged and dropped as a whole: a turn's
 *   stream carries only what a turn's model activity publishes (activities/step-stream.ts);
 * - a poll (`__temporal_workflow_stream_poll`) that does not decode or has the wrong shape is
 *   rejected (`UndecodablePayload`, `InvalidRequest`); one that arrives while the stream drains,
 *   with the library's own `StreamDraining`.
 *
 * Limits: a publish carries at most 1,000 items, each at most 64 KiB of base64, 1 MiB together, so
 * no event can push a subscriber's poll response (which the library caps near 1 MB, but always
 * with at least one item) much past that; the publisher id is at most 200 characters.
 *
 * Written against `@temporalio/workflow-streams` 1.23.0 (pinned in package.json): it reaches the
 * library's private `onPublish`, `onPoll` and `draining`.
 */
import * as wf from '@temporalio/workflow';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { decodePayloadWire, type WorkflowStream } from '@temporalio/workflow-streams/workflow';
import { MAX_ID } from './field-limits.js';
import { decodeArgument, rawSignal, rawUpdate } from './raw-messages.js';
import { rejection } from './rejection.js';
import { TURN_EVENTS_TOPIC } from './turn-events.js';

const PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';
const POLL_UPDATE = '__temporal_workflow_stream_poll';

export const MAX_PUBLISH_ITEMS = 1_000;
export const MAX_ITEM_CHARS = 64 * 1024;
export const MAX_PUBLISH_CHARS = 1024 * 1024;
const MAX_POLL_TOPICS = 16;

/** What the library keeps private and the guard needs. */
interface StreamInternals {
  draining: boolean;
  onPublish(input: unknown): void;
  onPoll(input: unknown): Promise<unknown>;
}

/** Registers the checked handlers over the ones `new WorkflowStream()` registered. */
export function guardStream(stream: WorkflowStream): void {
  const internals = stream as unknown as StreamInternals;
  wf.setHandler(rawSignal(PUBLISH_SIGNAL), (raw) => {
    const decoded = decodeArgument(raw);
    const problem = decoded.ok ? publishProblem(decoded.value) : `it could not be decoded: ${decoded.reason}`;
    if (problem) {
      wf.log.warn('Ignored an invalid stream publish signal', { error: problem });
      return;
    }
    internals.onPublish((decoded as { value: unknown }).value);
  });
  wf.setHandler(rawUpdate<unknown>(POLL_UPDATE), (raw) => internals.onPoll((decodeArgument(raw) as { value: unknown }).value), {
    validator: (raw) => {
      if (internals.draining) {
        // The library's own refusal, which subscribers know to retry on the successor run.
        throw ApplicationFailure.create({ message: 'Workflow is draining for continue-as-new', type: 'StreamDraining', nonRetryable: true });
      }
      const decoded = decodeArgument(raw);
      if (!decoded.ok) throw rejection('UndecodablePayload', `${POLL_UPDATE} could not be decoded: ${decoded.reason}`);
      const problem = pollProblem(decoded.value);
      if (problem) throw rejection('InvalidRequest', `Invalid ${POLL_UPDATE}: ${problem}`);
    },
  });
}

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

function pollProblem(input: unknown): string | undefined {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return 'it is not an object';
  const { topics, from_offset: fromOffset } = input as Record<string, unknown>;
  if (typeof fromOffset !== 'number' || !Number.isSafeInteger(fromOffset) || fromOffset < 0) return 'from_offset is not a non-negative integer';
  if (!Array.isArray(topics)) return 'topics is not a list';
  if (topics.length > MAX_POLL_TOPICS) return `topics has ${topics.length} entries; the limit is ${MAX_POLL_TOPICS}`;
  if (topics.some((topic) => typeof topic !== 'string' || topic.length > MAX_ID)) return `a topic is not a string of at most ${MAX_ID} characters`;
  return undefined;
}
