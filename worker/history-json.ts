/**
 * Histories to and from proto3 JSON (the form the Web UI downloads and `turnpike replay --save`
 * writes), on one copy of protobufjs: the one `@temporalio/proto` itself loads.
 *
 * npm installs grpc's protobufjs 7 at an application's top level and gives each `@temporalio/*`
 * package its own nested protobufjs 8. The SDK's `historyToJSON` and `historyFromJSON`
 * (`@temporalio/common/lib/proto-utils`) take the message types from `@temporalio/proto`'s copy
 * and the JSON conversion from `@temporalio/common`'s, and the conversion refuses a type of another
 * copy ("type must be a Type"). Here both come from `@temporalio/proto`'s own folder, so they work
 * whatever npm hoisted, with no package for the application to add.
 */
import { createRequire } from 'node:module';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;

interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
}

interface MessageType {
  fromObject(value: unknown): unknown;
}

interface Converters {
  protojson: ProtoJson;
  historyType: MessageType;
}

let converters: Converters | undefined;

function load(): Converters {
  if (converters) return converters;
  const fromHere = createRequire(import.meta.url);
  const protoEntry = fromHere.resolve('@temporalio/proto');
  // Everything from @temporalio/proto's own folder: its protobufjs, as it resolves it.
  const fromProto = createRequire(protoEntry);
  const proto = fromProto(protoEntry) as object;
  const { patchProtobufRoot } = fromProto('@temporalio/proto/lib/patch-protobuf-root') as { patchProtobufRoot(root: object): { lookupType(name: string): MessageType } };
  const protojson = fromProto('protobufjs/ext/protojson') as ProtoJson;
  const historyType = patchProtobufRoot(proto).lookupType('temporal.api.history.v1.History');
  converters = { protojson, historyType };
  return converters;
}

/** A history (as `fetchHistory` returns it) as proto3 JSON text. */
export function historyToJSON(history: History): string {
  const { protojson, historyType } = load();
  return JSON.stringify(protojson.toJson(historyType, historyType.fromObject(history)), null, 2);
}

/** Why a parsed JSON value is not a history, or undefined when it has the shape of one. */
export function notAHistory(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `it holds ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}, not a history (an object with "events")`;
  const events = (value as { events?: unknown }).events;
  if (!Array.isArray(events)) return `it has no "events" array, so it is not a history (keys: ${Object.keys(value).slice(0, 5).join(', ') || 'none'})`;
  if (events.length === 0) return 'its "events" array is empty';
  const index = events.findIndex((event) => typeof event !== 'object' || event === null || !Object.keys(event as object).some((key) => key.endsWith('EventAttributes')));
  if (index >= 0) return `event ${index + 1} has no ...EventAttributes, so it is not a history event`;
  return undefined;
}

/** A history from proto3 JSON (parsed), as the Web UI and `historyToJSON` write it; throws saying what is wrong. */
export function historyFromJSON(json: unknown): History {
  const wrong = notAHistory(json);
  if (wrong) throw new TypeError(wrong);
  const { protojson, historyType } = load();
  const loaded = protojson.fromJson(historyType, fixHistory(json as { events: Array<Record<string, unknown>> }), { ignoreUnknownFields: true });
  if (loaded === null || loaded === undefined) throw new TypeError('it is not a valid history');
  return loaded as History;
}

// The enum spellings of older tools (`WorkflowExecutionStarted` for `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED`),
// fixed as the SDK's own historyFromJSON fixes them.

function constantCase(name: string): string {
  return name.replace(/[^\b][A-Z]/g, (pair) => `${pair[0]}_${pair[1]}`).toUpperCase();
}

function fixEnum(object: Record<string, unknown> | undefined, key: string, prefix: string): Record<string, unknown> {
  const value = object?.[key];
  if (typeof value !== 'string') return {};
  return { [key]: value.startsWith(prefix) ? value : `${prefix}_${constantCase(value)}` };
}

function fixEvent(event: Record<string, unknown>): Record<string, unknown> {
  const key = Object.keys(event).find((name) => name.endsWith('EventAttributes'))!;
  const attributes = event[key] as Record<string, unknown>;
  const taskQueue = attributes.taskQueue as Record<string, unknown> | undefined;
  const childFailure = attributes.childWorkflowExecutionFailureInfo as Record<string, unknown> | undefined;
  return {
    ...event,
    ...fixEnum(event, 'eventType', 'EVENT_TYPE'),
    [key]: {
      ...attributes,
      ...(taskQueue ? { taskQueue: { ...taskQueue, ...fixEnum(taskQueue, 'kind', 'TASK_QUEUE_KIND') } } : {}),
      ...fixEnum(attributes, 'parentClosePolicy', 'PARENT_CLOSE_POLICY'),
      ...fixEnum(attributes, 'workflowIdReusePolicy', 'WORKFLOW_ID_REUSE_POLICY'),
      ...fixEnum(attributes, 'initiator', 'CONTINUE_AS_NEW_INITIATOR'),
      ...fixEnum(attributes, 'retryState', 'RETRY_STATE'),
      ...(childFailure ? { childWorkflowExecutionFailureInfo: { ...childFailure, ...fixEnum(childFailure, 'retryState', 'RETRY_STATE') } } : {}),
    },
  };
}

function fixHistory(history: { events: Array<Record<string, unknown>> }): { events: Array<Record<string, unknown>> } {
  return { events: history.events.map(fixEvent) };
}
