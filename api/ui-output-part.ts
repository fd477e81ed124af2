/**
 * A typed answer (docs/typed-output.md) as one `data-output` part of a UI message (id `output`,
 * so each chunk replaces the last in the message): the partial object while the model writes the
 * answer, then the object the turn validated, or the errors of an answer that stayed invalid.
 *
 * Partial objects are parsed from the step's text deltas with `parsePartialJson` from the `ai`
 * package, as `outputStream` does: a later step, or a retried attempt, writes its answer from the
 * start, and a partial is sent only when the object changed.
 */
import { importOptional } from '../peers/optional-packages.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';

/** What the `data-output` part holds. */
export type OutputPartData =
  /** The turn asks for a typed answer; `partial` is the answer so far, from model step `step`. */
  | { state: 'streaming'; step?: number; partial?: Record<string, unknown> }
  /** The answer the turn validated against its schema. */
  | { state: 'done'; output: unknown }
  /** The turn ended `invalid-output`: its last answer and why it was not valid. */
  | { state: 'invalid'; text: string; errors: string[] };

export interface OutputChunk {
  type: 'data-output';
  id: 'output';
  data: OutputPartData;
}

/** Parses partial JSON (`parsePartialJson` of the `ai` package): the value so far, if any. */
export type PartialJsonParser = (text: string) => Promise<unknown>;

/** Loads the `ai` package's partial-JSON parser (an optional peer dependency). */
export async function loadPartialJsonParser(): Promise<PartialJsonParser> {
  const { parsePartialJson } = await importOptional('Streaming a typed answer to useChat (data-output)', ['ai'], () => import('ai'));
  return async (text) => (await parsePartialJson(text)).value;
}

export class OutputPart {
  private step = 0;
  private attempt = 0;
  private text = '';
  private last = '';

  constructor(private readonly parse: PartialJsonParser) {}

  /** The part a typed turn's UI stream starts with: an answer is coming. */
  static started(): OutputChunk {
    return { type: 'data-output', id: 'output', data: { state: 'streaming' } };
  }

  /** The chunk for a delta of the answer, when the partial object changed. */
  async delta(event: Extract<TurnEvent, { type: 'text-delta' }>): Promise<OutputChunk | undefined> {
    if (event.step !== this.step || event.attempt !== this.attempt) [this.step, this.attempt, this.text, this.last] = [event.step, event.attempt, '', ''];
    this.text += event.text;
    const value = await this.parse(this.text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const shown = JSON.stringify(value);
    if (shown === this.last) return undefined;
    this.last = shown;
    return { type: 'data-output', id: 'output', data: { state: 'streaming', step: this.step, partial: value as Record<string, unknown> } };
  }

  /** A retried attempt of the step streams its answer again from the start. */
  retried(event: Extract<TurnEvent, { type: 'step-retry' }>): void {
    if (event.step === this.step) [this.text, this.last] = ['', ''];
  }

  /** The validated answer, or the errors of the last one; nothing for a turn that ended otherwise. */
  static finished(event: Extract<TurnEvent, { type: 'turn-finished' }>): OutputChunk | undefined {
    if (event.output !== undefined) return { type: 'data-output', id: 'output', data: { state: 'done', output: event.output } };
    if (event.status === 'invalid-output') return { type: 'data-output', id: 'output', data: { state: 'invalid', text: event.text, errors: event.outputErrors ?? [] } };
    return undefined;
  }
}
