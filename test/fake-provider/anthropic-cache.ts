/**
 * The fake Anthropic's prompt cache: it checks `cache_control` as the Messages API does and
 * counts cache reads and writes the way the API documents them.
 *
 * - At most 4 blocks carry `cache_control`; each is `{ type: 'ephemeral', ttl?: '5m' | '1h' }`;
 *   thinking blocks cannot carry one; a `1h` breakpoint may not follow a `5m` one.
 * - The prompt is a sequence of blocks in the order tools → system → messages. A breakpoint
 *   caches the prefix that ends with its block, if that prefix reaches the minimum length
 *   (1,024 tokens here, as for Sonnet). A request reads the longest cached prefix that ends at
 *   one of its breakpoints or at one of the 20 blocks before each breakpoint.
 * - Usage: `cache_read_input_tokens` is the prefix read, `cache_creation_input_tokens` what was
 *   written after it up to the last breakpoint, `input_tokens` the rest.
 *
 * Tokens are estimated as one per four characters of each block's JSON (without its
 * `cache_control`, which does not change what is cached). Entries never expire: tests are short.
 */
import { createHash } from 'node:crypto';
import type { Json } from './server.js';

export const MAX_CACHE_BREAKPOINTS = 4;
export const MIN_CACHEABLE_TOKENS = 1024;
const LOOKBACK_BLOCKS = 20;

interface PromptBlock {
  /** Where the block is, for error messages: `tools.2`, `system.0`, `messages.3.content.1`. */
  at: string;
  json: string;
  cacheControl: unknown;
  type: unknown;
}

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The request's prompt as cacheable blocks, in prefix order. */
function promptBlocks(body: Record<string, Json>): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  const add = (at: string, value: unknown, prefix = '') => {
    const { cache_control: cacheControl, ...rest } = isObject(value) ? value : { value };
    blocks.push({ at, json: prefix + JSON.stringify(rest), cacheControl, type: isObject(value) ? value.type : 'text' });
  };
  (Array.isArray(body.tools) ? body.tools : []).forEach((tool: Json, index: number) => add(`tools.${index}`, tool));
  if (typeof body.system === 'string') add('system', body.system);
  else if (Array.isArray(body.system)) body.system.forEach((block: Json, index: number) => add(`system.${index}`, block));
  (Array.isArray(body.messages) ? body.messages : []).forEach((message: Json, index: number) => {
    if (typeof message?.content === 'string') add(`messages.${index}`, message.content, `${String(message.role)}:`);
    else if (Array.isArray(message?.content)) message.content.forEach((block: Json, blockIndex: number) => add(`messages.${index}.content.${blockIndex}`, block, `${String(message.role)}:`));
  });
  return blocks;
}

/** Why the request's `cache_control` use would be refused by the API; empty when it is valid. */
export function validateCacheControl(body: Record<string, Json>): string[] {
  const errors: string[] = [];
  const marked = promptBlocks(body).filter((block) => block.cacheControl !== undefined);
  let seenShortTtl = false;
  for (const block of marked) {
    const control = block.cacheControl;
    if (block.type === 'thinking' || block.type === 'redacted_thinking') {
      errors.push(`${block.at}.${String(block.type)}.cache_control: Extra inputs are not permitted`);
      continue;
    }
    if (!isObject(control) || control.type !== 'ephemeral') {
      errors.push(`${block.at}.cache_control.type: Input should be 'ephemeral'`);
      continue;
    }
    const unknown = Object.keys(control).filter((key) => key !== 'type' && key !== 'ttl');
    if (unknown.length > 0) errors.push(`${block.at}.cache_control.${unknown[0]}: Extra inputs are not permitted`);
    if (control.ttl !== undefined && control.ttl !== '5m' && control.ttl !== '1h') errors.push(`${block.at}.cache_control.ttl: Input should be '5m' or '1h'`);
    if (control.ttl === '1h' && seenShortTtl) {
      errors.push(`${block.at}.cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block (longer-lived entries must come first)`);
    }
    if (control.ttl !== '1h') seenShortTtl = true;
  }
  if (marked.length > MAX_CACHE_BREAKPOINTS) errors.push(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`);
  return errors;
}

export interface PromptCacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** One server's prompt cache. */
export class PromptCache {
  /** Cached prefixes: hash of (model, blocks up to the end of the prefix) → its tokens. */
  private readonly entries = new Map<string, number>();

  /** Reads and writes the cache for a (valid) request, and returns its input usage. */
  use(body: Record<string, Json>): PromptCacheUsage {
    const blocks = promptBlocks(body);
    const hashes: string[] = [];
    const tokens: number[] = [];
    let hash = createHash('sha256').update(String(body.model)).digest('hex');
    let total = 0;
    for (const block of blocks) {
      hash = createHash('sha256').update(hash).update(block.json).digest('hex');
      total += Math.ceil(block.json.length / 4);
      hashes.push(hash);
      tokens.push(total);
    }
    const breakpoints = blocks.flatMap((block, index) => (block.cacheControl !== undefined ? [index] : []));
    let read = -1;
    for (const breakpoint of breakpoints) {
      for (let index = breakpoint; index >= Math.max(0, breakpoint - LOOKBACK_BLOCKS); index--) {
        if (this.entries.has(hashes[index]!)) {
          read = Math.max(read, index);
          break;
        }
      }
    }
    const readTokens = read >= 0 ? tokens[read]! : 0;
    let written = read;
    for (const breakpoint of breakpoints) {
      if (breakpoint <= read || tokens[breakpoint]! < MIN_CACHEABLE_TOKENS) continue;
      this.entries.set(hashes[breakpoint]!, tokens[breakpoint]!);
      written = Math.max(written, breakpoint);
    }
    const creationTokens = written > read ? tokens[written]! - readTokens : 0;
    return { input_tokens: total - readTokens - creationTokens, cache_creation_input_tokens: creationTokens, cache_read_input_tokens: readTokens };
  }

  clear(): void {
    this.entries.clear();
  }
}
