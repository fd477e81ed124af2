/**
 * The names MCP tools get in front of the model: `<server>__<tool>`.
 *
 * OpenAI and Anthropic accept tool names of 1–64 characters from `[a-zA-Z0-9_-]`; MCP allows
 * any string of up to 128 characters (dots, slashes, …). So the rule is:
 *
 * 1. every character outside `[a-zA-Z0-9_-]` in the tool's name becomes `_`;
 * 2. the server's name (checked at start-up to be `[a-zA-Z0-9-]{1,32}`: no `_`, so the first
 *    `__` always ends it) and `__` go in front;
 * 3. if the result is longer than 64 characters, or another tool of the same server maps to it
 *    too (`a.b` and `a_b`), it is cut to 55 characters and `_` plus 8 hex characters of a hash
 *    of the tool's original name are appended: the name depends only on the server's name and
 *    the tool's, never on listing order, so it is the same after a worker restart.
 *
 * Pure and deterministic: a unit test pins the rule.
 */
import { createHash } from 'node:crypto';

export const MCP_SERVER_NAME = /^[a-zA-Z0-9-]{1,32}$/;
const MAX_TOOL_NAME = 64;
const SEPARATOR = '__';

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** The model-facing names of one server's tools; original name → name. */
export function mcpToolNames(server: string, toolNames: readonly string[]): Map<string, string> {
  const plain = (original: string) => `${server}${SEPARATOR}${original.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  // Every tool whose plain name another tool shares is hashed, not only the later one, so a
  // name does not depend on the order in which the server lists its tools.
  const uses = new Map<string, number>();
  for (const original of toolNames) uses.set(plain(original), (uses.get(plain(original)) ?? 0) + 1);
  const names = new Map<string, string>();
  for (const original of toolNames) {
    const name = plain(original);
    const unique = name.length <= MAX_TOOL_NAME && uses.get(name) === 1 && original.length > 0;
    names.set(original, unique ? name : `${name.slice(0, MAX_TOOL_NAME - 9)}_${shortHash(original)}`);
  }
  return names;
}

/** The server part of a model-facing name, or undefined for a name that is not an MCP tool's. */
export function mcpServerOf(name: string): string | undefined {
  const index = name.indexOf(SEPARATOR);
  if (index <= 0) return undefined;
  const server = name.slice(0, index);
  return MCP_SERVER_NAME.test(server) ? server : undefined;
}
