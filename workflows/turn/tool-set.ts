/**
 * A turn's tool list by reference. The tools a turn offers the model are fixed when it starts
 * (its first model step describes them), yet every model step used to carry them again: with a few dozen tools that
 * is several KB of history per step, however short the conversation. A turn now hashes its list
 * once and sends it inline only with the steps whose worker most likely lacks it (the first,
 * and the one after a wait on people, as the transcript is sent); every other step sends the
 * hash alone. The model activity keeps tool lists by hash, shared by every turn that offers the
 * same tools, and reads one it lacks from the turn with the `modelTools` query, checked against
 * the hash.
 * Pure JS (`sha256Hex`, @noble/hashes): the workflow sandbox has no `crypto` module.
 */
import { canonicalJson, sha256Hex } from '../messages/input-hash.js';
import type { ModelToolSpec, ToolSpec } from '../types/index.js';

/** What the model is told of each tool: its name, description and input schema, in order. */
export function modelToolsOf(specs: readonly ToolSpec[]): ModelToolSpec[] {
  return specs.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}

/** The content hash of a tool list, in order (canonical JSON, so it survives the data converter). */
export function toolSetHash(tools: readonly ModelToolSpec[]): string {
  return sha256Hex(`tools-v1\n${canonicalJson(tools)}`);
}
