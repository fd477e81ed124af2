/** Sizes of a workflow's event history, the unit of Temporal's storage, replay and transfer costs. */
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';

export interface HistorySize {
  events: number;
  /** The History protobuf, encoded: what the server stores and sends to a replaying worker. */
  protoBytes: number;
  /** `temporal workflow show --output json` form. */
  jsonBytes: number;
  /** Events by type, without the `EVENT_TYPE_` prefix. */
  eventTypes: Record<string, number>;
}

export async function historySize(handle: WorkflowHandle): Promise<HistorySize> {
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const eventTypes: Record<string, number> = {};
  for (const event of events) {
    const name = (proto.temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType)).replace(/^EVENT_TYPE_/, '');
    eventTypes[name] = (eventTypes[name] ?? 0) + 1;
  }
  return {
    events: events.length,
    protoBytes: proto.temporal.api.history.v1.History.encode(history).finish().length,
    jsonBytes: Buffer.byteLength(historyToJSON(history)),
    eventTypes,
  };
}
