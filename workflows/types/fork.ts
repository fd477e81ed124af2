/**
 * A forked turn's prefix, shared by reference (docs/conversations.md, "Forking a turn from step
 * k"): the fork's input names the run it was forked from and the hash of the messages it
 * carries from it, instead of copying them. Pure types: nothing here runs.
 */

/** The original's transcript up to the end of a step, which a fork starts from without holding it. */
export interface ForkReference {
  /** The turn forked from (its workflow id). */
  workflowId: string;
  /** The run whose `transcript` query answered the prefix: the one the prefix is read from. */
  runId: string;
  /** The original's last step the fork carries. */
  atStep: number;
  /** How many messages the prefix holds: the fork's own messages start at this offset. */
  prefixLength: number;
  /** Chain hash of the prefix (`workflows/context/transcript-hash.ts`), checked wherever it is read. */
  prefixHash: string;
  /**
   * The tool call ids in the prefix: a model that repeats one in the fork gets it renamed
   * (`<id>_dup<n>`), as the original would have. Absent: none.
   */
  toolCallIds?: string[];
  /** The text of the prefix's last user message, its first 1,000 characters: what the fork's tools are told (`CallContext.userMessage`). */
  userMessage?: string;
}
