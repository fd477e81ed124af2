/**
 * The model activity's side of history-by-reference (`workflows/context/transcript.ts`): each turn's
 * transcript, kept per workflow run on the worker, so a model step's input carries only the
 * messages added since the previous step.
 *
 * What is not cached here (a step that ran on another worker, a worker restart, an entry evicted)
 * is read from the turn itself; whatever the source, the transcript is checked against the hash
 * the turn computed before the model sees it. A cache entry that does not match is dropped and
 * the whole transcript read again; a transcript read from the turn that does not match fails the
 * step (`TranscriptMismatch`, not retried): a model call on other messages than the turn's would
 * be silently wrong.
 *
 * A Map in insertion order is the LRU (an entry is re-inserted on use): two dozen lines, where a
 * cache library would add a dependency for the same eviction loop.
 */
import { ApplicationFailure } from '@temporalio/common';
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from '../workflows/context/transcript-hash.js';
import type { Message, TranscriptReference } from '../workflows/types/index.js';

/** Error type of a transcript that does not match its hash. */
export const TRANSCRIPT_MISMATCH = 'TranscriptMismatch';

export interface TranscriptCacheOptions {
  /** Turns whose transcript is kept. Default 1,000. */
  maxEntries?: number;
  /**
   * Total size of the kept transcripts, as canonical JSON (UTF-16 code units). Default 16 Mi: as
   * parsed objects they take a few times that on the worker's heap, which a deployment bounds
   * (README, "Memory").
   */
  maxSize?: number;
}

export const DEFAULT_TRANSCRIPT_CACHE: Required<TranscriptCacheOptions> = { maxEntries: 1_000, maxSize: 16 * 1024 * 1024 };

/** Reads the messages from `offset` up to (not including) `to` from the turn. */
export type TranscriptSource = (offset: number, to: number) => Promise<Message[]>;

interface Entry {
  length: number;
  hash: string;
  size: number;
  messages: Message[];
}

const EMPTY: Entry = { length: 0, hash: TRANSCRIPT_HASH_START, size: 0, messages: [] };

/** How each resolved step got its transcript; for tests and diagnostics. */
export interface TranscriptCacheStats {
  /** Every message before `from` came from the cache. */
  hits: number;
  /** Some were read from the turn. */
  reads: number;
  /** A cached transcript did not match the turn's hash and was dropped. */
  staleEntries: number;
}

export class TranscriptCache {
  private readonly entries = new Map<string, Entry>();
  private size = 0;
  private readonly limits: Required<TranscriptCacheOptions>;
  readonly stats: TranscriptCacheStats = { hits: 0, reads: 0, staleEntries: 0 };

  constructor(options: TranscriptCacheOptions = {}) {
    this.limits = { ...DEFAULT_TRANSCRIPT_CACHE, ...options };
  }

  /** The transcript `reference` names, for the run `key`; checked against its hash. */
  async resolve(key: string, reference: TranscriptReference, read: TranscriptSource): Promise<Message[]> {
    checkReference(reference);
    const cached = this.take(key);
    // A retried attempt of the step the cache already served.
    if (cached && cached.length === reference.length && cached.hash === reference.hash) {
      this.stats.hits++;
      return this.keep(key, cached).messages;
    }
    const base = cached && cached.length <= reference.from ? cached : EMPTY;
    const reads = this.stats.reads;
    let entry = await this.extend(base, reference, read);
    if (!entry && base !== EMPTY) {
      this.stats.staleEntries++;
      entry = await this.extend(EMPTY, reference, read);
    }
    if (!entry) {
      throw ApplicationFailure.nonRetryable(
        `The transcript read from the turn does not match the hash of the ${reference.length} messages the turn sent this model step; the model was not called.`,
        TRANSCRIPT_MISMATCH,
      );
    }
    if (this.stats.reads === reads) this.stats.hits++;
    return this.keep(key, entry).messages;
  }

  /** Drops a run's transcript (its turn is ending). */
  forget(key: string): void {
    this.take(key);
  }

  get entryCount(): number {
    return this.entries.size;
  }

  private async extend(base: Entry, reference: TranscriptReference, read: TranscriptSource): Promise<Entry | undefined> {
    const missing = reference.from - base.length;
    const fetched = missing > 0 ? await read(base.length, reference.from) : [];
    if (missing > 0) this.stats.reads++;
    if (fetched.length !== missing) return undefined;
    const added = [...fetched, ...reference.added];
    const { hash, size } = extendTranscriptHash(base.hash, added);
    if (hash !== reference.hash) return undefined;
    return { length: reference.length, hash, size: base.size + size, messages: [...base.messages, ...added] };
  }

  private take(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.size -= entry.size;
    }
    return entry;
  }

  private keep(key: string, entry: Entry): Entry {
    // Larger than the whole cache: served, not kept, so it does not empty the cache for nothing.
    if (entry.size > this.limits.maxSize) return entry;
    this.entries.set(key, entry);
    this.size += entry.size;
    for (const [oldest, { size }] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.size <= this.limits.maxSize) break;
      this.entries.delete(oldest);
      this.size -= size;
    }
    return entry;
  }
}

function checkReference(reference: TranscriptReference): void {
  const { length, from, hash, added } = reference ?? {};
  const valid =
    Number.isInteger(length) && Number.isInteger(from) && from >= 0 && from <= length && typeof hash === 'string' && Array.isArray(added) && added.length === length - from;
  if (!valid) throw ApplicationFailure.nonRetryable('callModel: transcript must be { length, hash, from, added } with added.length = length - from', 'InvalidModelStep');
}
