/**
 * The messages of an MCP elicitation parked in a turn (elicitations.ts): what the tool's activity
 * sends with `parkElicitation`, and the answers it gets back. Pure types: nothing here runs.
 * Internal: the update definitions (definitions.ts) carry them, and no entry point names them.
 */
import type { JsonSchema } from './messages.js';

export interface ParkElicitationInput {
  toolCallId: string;
  /** The activity attempt that asks: a retry's question replaces an older attempt's. */
  attempt: number;
  message: string;
  requestedSchema: JsonSchema;
}

/** MCP's `ElicitResult`, as the call receives it. */
export type ElicitationAnswer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

export interface ParkElicitationResult {
  elicitationId: string;
  /** Set when an answer given to an older attempt's identical question is handed over at once. */
  answer?: ElicitationAnswer;
}

export type ElicitationAnswerState = { state: 'open' } | { state: 'answered'; answer: ElicitationAnswer } | { state: 'gone'; reason: string };
