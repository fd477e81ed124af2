/**
 * The model activity's side of tools by reference (`workflows/turn/tool-set.ts`): tool lists kept by
 * their hash, shared by every turn on the worker that offers the same tools. A step that names a
 * list this worker does not have (another worker ran the turn's earlier steps, a restart) reads
 * it from the turn with the `modelTools` query and checks it against the hash before the model
 * sees it; one that does not match fails the step (`ToolSetMismatch`, not retried).
 */
import { ApplicationFailure } from '@temporalio/common';
import { toolSetHash } from '../workflows/turn/tool-set.js';
import type { ModelToolSpec } from '../workflows/types/index.js';

export const TOOL_SET_MISMATCH = 'ToolSetMismatch';

/** Distinct tool lists kept; a worker usually offers a handful (one per `tools` selection). */
const MAX_TOOL_SETS = 64;

export interface ToolSetCacheStats {
  hits: number;
  reads: number;
}

export class ToolSetCache {
  /** In insertion order, re-inserted on use: the LRU. */
  private readonly sets = new Map<string, ModelToolSpec[]>();
  readonly stats: ToolSetCacheStats = { hits: 0, reads: 0 };

  /**
   * The tools of a step: `tools` when the turn sent them (kept under `hash`), else the list kept
   * under `hash`, else the one `read` returns, checked against `hash`.
   */
  async resolve(hash: string, tools: ModelToolSpec[] | undefined, read: () => Promise<ModelToolSpec[]>): Promise<ModelToolSpec[]> {
    if (typeof hash !== 'string' || hash === '') throw ApplicationFailure.nonRetryable('callModel: toolsHash must be a non-empty string', 'InvalidModelStep');
    if (tools) return this.keep(hash, tools);
    const kept = this.sets.get(hash);
    if (kept) {
      this.stats.hits++;
      return this.keep(hash, kept);
    }
    this.stats.reads++;
    const fetched = await read();
    if (!Array.isArray(fetched) || toolSetHash(fetched) !== hash) {
      throw ApplicationFailure.nonRetryable('The tools read from the turn do not match the hash the turn sent this model step; the model was not called.', TOOL_SET_MISMATCH);
    }
    return this.keep(hash, fetched);
  }

  get size(): number {
    return this.sets.size;
  }

  private keep(hash: string, tools: ModelToolSpec[]): ModelToolSpec[] {
    this.sets.delete(hash);
    this.sets.set(hash, tools);
    for (const oldest of this.sets.keys()) {
      if (this.sets.size <= MAX_TOOL_SETS) break;
      this.sets.delete(oldest);
    }
    return tools;
  }
}
