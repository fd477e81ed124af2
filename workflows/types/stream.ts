/**
 * The event stream as a run carries it to the next at continue-as-new: the wire form of
 * `@temporalio/workflow-streams` (stream-wire.ts encodes its items). Pure types: nothing here
 * runs. Internal: a turn's or a conversation's carry-over holds it, and no entry point names it.
 */

/** A stream carried to the next run at continue-as-new (the library's snapshot, field for field). */
export interface WorkflowStreamState {
  log: Array<{ topic: string; data: string; offset: number }>;
  base_offset: number;
  publisher_sequences: Record<string, number>;
  publisher_last_seen: Record<string, number>;
}
