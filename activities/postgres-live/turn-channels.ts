/**
 * Which PostgreSQL notification channel a turn's live pieces go on: one of its own, so that an
 * API process's `LISTEN` connection receives only the turns its readers read (live-listener.ts),
 * not every streaming turn of the fleet.
 *
 *   turnpike_live_3f9c2a7be1d04c6a58e2f1   (the configured channel, `_`, 22 hex digits of the id's SHA-256)
 *
 * A channel is an SQL identifier of at most 63 bytes, and a workflow id may be longer and hold any
 * character: the id's hash names the channel, and the configured channel's first 40 characters
 * keep the channels of two deployments on one database apart. Two ids whose hashes meet (88 bits)
 * share a channel: each payload still names its turn, and a listener hands a piece only to that
 * turn's readers.
 */
import { createHash } from 'node:crypto';

/** Characters of the configured channel kept in a turn's channel (40 + 1 + 22 = 63, PostgreSQL's limit). */
const BASE_CHARACTERS = 40;
const HASH_DIGITS = 22;

/** The notification channel of `workflowId`'s live pieces, under the configured channel `base`. */
export function turnChannel(base: string, workflowId: string): string {
  return `${base.slice(0, BASE_CHARACTERS)}_${createHash('sha256').update(workflowId).digest('hex').slice(0, HASH_DIGITS)}`;
}
