/**
 * The content hash that binds a model step to the exact messages it must see.
 *
 * A chain, not one hash over the whole transcript: `h(n + 1) = SHA-256(h(n) + "\n" +
 * canonicalJson(message n))`, starting from {@link TRANSCRIPT_HASH_START}. The turn extends it
 * by the messages each step adds, so a step costs the workflow a hash of its own few messages,
 * not of the conversation; the model activity extends a cached transcript's hash the same way
 * and compares. Canonical JSON (keys sorted, `undefined` dropped) survives the data converter's
 * round trip, so the workflow and the activity hash the same bytes.
 * Pure JS (`sha256Hex`, @noble/hashes): the workflow sandbox has no `crypto` module.
 */
import { canonicalJson, sha256Hex } from '../messages/input-hash.js';
import type { Message } from '../types/index.js';

/** The hash of an empty transcript. */
export const TRANSCRIPT_HASH_START = 'transcript-v1';

export interface TranscriptHashed {
  hash: string;
  /** Canonical JSON length of the messages hashed (UTF-16 code units): a size estimate for caches and inlining. */
  size: number;
}

/** Extends `hash` (of the transcript so far) by `messages`, in order. */
export function extendTranscriptHash(hash: string, messages: readonly Message[]): TranscriptHashed {
  let size = 0;
  for (const message of messages) {
    const json = canonicalJson(message);
    size += json.length;
    hash = sha256Hex(`${hash}\n${json}`);
  }
  return { hash, size };
}
