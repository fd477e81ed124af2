/**
 * A turn's transcript (the history it was given, then what it appended), sent to the model
 * activity by reference: each step's activity input carries the transcript's length, its chain
 * hash and only the messages added since the previous step, so a step's history stays the same
 * size however long the conversation is (issue #14).
 *
 * The activity keeps each turn's transcript in a worker-side cache; when it does not have it
 * (another worker, a restart, the first step of a long conversation) it reads the missing
 * messages from this turn with the `transcript` query, served while the turn awaits the
 * activity, and checks the hash, so a step sees exactly the messages the turn holds, or fails.
 */
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from './transcript-hash.js';
import type { ForkReference, HistoryPage, HistoryPageRequest, Message, TranscriptReference } from '../types/index.js';

/**
 * A first step whose conversation is at most this big (canonical JSON) carries it inline: a query
 * round trip costs more than these bytes. The same size below which payloads are not compressed.
 */
export const INLINE_FIRST_STEP_SIZE = 4 * 1024;

/** A `transcript` query answers with at most about this much JSON (and at least one message), well inside gRPC's 4 MiB. */
export const TRANSCRIPT_PAGE_SIZE = 1024 * 1024;

export class Transcript {
  /** Messages covered by `hash`. */
  private hashed: number;
  private hash: string;
  /** Size of the messages this turn holds and hashed (a fork's prefix is not counted: it is never sent inline). */
  private hashedSize = 0;
  /** The length the previous step sent: a cache that served it holds the messages before it. */
  private sent = 0;
  /** Read through {@link uncached}. */
  private fresh = true;
  /** Where this turn's own messages start: a fork's prefix length, else 0. */
  private readonly base: number;

  /**
   * `appended` is the turn's own list, which grows as the turn runs. A fork (`prefix`) starts
   * hashed at the prefix's length with its hash, and holds none of its messages: offsets below
   * `prefix.prefixLength` are read from the turn it was forked from.
   */
  constructor(
    private readonly given: readonly Message[],
    private readonly appended: readonly Message[],
    private readonly prefix?: ForkReference,
  ) {
    this.base = prefix?.prefixLength ?? 0;
    this.hashed = this.base;
    this.hash = prefix?.prefixHash ?? TRANSCRIPT_HASH_START;
  }

  get length(): number {
    return this.base + this.given.length + this.appended.length;
  }

  /** The messages from `from` to `to` that this turn holds (a fork's prefix is not among them). */
  slice(from: number, to: number): Message[] {
    const given = this.given.length;
    from = Math.max(0, from - this.base);
    to = Math.max(0, to - this.base);
    return [...this.given.slice(Math.min(from, given), Math.min(to, given)), ...this.appended.slice(Math.max(0, from - given), Math.max(0, to - given))];
  }

  /**
   * The turn waited on people (a park) since its previous step. That wait can last hours, so the
   * worker that runs the next step has most likely dropped this turn's transcript from its cache,
   * or is another worker: the next step is sent like a first one, inline when the whole transcript
   * is at most {@link INLINE_FIRST_STEP_SIZE}, which saves the step a `transcript` query.
   */
  resumed(): void {
    this.fresh = true;
  }

  /**
   * Whether the worker that runs the next step most likely lacks this turn's transcript (and its
   * tools): at the turn's first step, and after a wait on people (see {@link resumed}).
   */
  get uncached(): boolean {
    return this.fresh;
  }

  /** The reference for the next model step: hashes only the messages added since the last one. */
  nextStep(): TranscriptReference {
    const length = this.length;
    const extended = extendTranscriptHash(this.hash, this.slice(this.hashed, length));
    this.hash = extended.hash;
    this.hashed = length;
    this.hashedSize += extended.size;
    // Not inline, a first step sends nothing: its messages are in the turn's start event.
    const from = this.fresh && this.hashedSize <= INLINE_FIRST_STEP_SIZE ? this.base : this.sent === 0 ? length : this.sent;
    this.sent = length;
    this.fresh = false;
    return { length, hash: this.hash, from, added: this.slice(from, length), ...(this.prefix ? { prefix: this.prefix } : {}) };
  }

  /** `transcript` query: messages from `offset`, at most `limit`, cut at about {@link TRANSCRIPT_PAGE_SIZE}. */
  page(request: HistoryPageRequest = {}): HistoryPage {
    const total = this.length;
    const offset = Math.min(total, Math.max(0, Math.floor(Number(request?.offset ?? 0)) || 0));
    // A fork answers its own part and the reference; the reader reads the prefix from the original.
    if (this.prefix && offset < this.base) return { messages: [], offset, total, forkOf: this.prefix };
    const limit = Math.max(1, Math.floor(Number(request?.limit ?? total)) || total);
    const messages: Message[] = [];
    let size = 0;
    for (const message of this.slice(offset, Math.min(total, offset + limit))) {
      size += JSON.stringify(message).length;
      if (messages.length > 0 && size > TRANSCRIPT_PAGE_SIZE) break;
      messages.push(message);
    }
    return { messages, offset, total, ...(this.prefix ? { forkOf: this.prefix } : {}) };
  }
}
