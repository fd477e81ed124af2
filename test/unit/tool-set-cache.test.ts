import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { TOOL_SET_MISMATCH, ToolSetCache } from '../../activities/tool-set-cache.js';
import { toolSetHash } from '../../workflows/turn/tool-set.js';
import type { ModelToolSpec } from '../../workflows/types/index.js';

const tool = (name: string, description = `The ${name} tool.`): ModelToolSpec => ({ name, description, inputSchema: { type: 'object', properties: {} } });
const never = async (): Promise<ModelToolSpec[]> => {
  throw new Error('the turn was read');
};

describe('toolSetHash', () => {
  it('depends on every field and the order, not on key order', () => {
    const tools = [tool('a'), tool('b')];
    expect(toolSetHash(tools)).toMatch(/^[0-9a-f]{64}$/);
    expect(toolSetHash([{ inputSchema: tools[0]!.inputSchema, description: tools[0]!.description, name: 'a' }, tools[1]!])).toBe(toolSetHash(tools));
    expect(toolSetHash([tools[1]!, tools[0]!])).not.toBe(toolSetHash(tools));
    expect(toolSetHash([tool('a', 'Another description.'), tools[1]!])).not.toBe(toolSetHash(tools));
    expect(toolSetHash([])).not.toBe(toolSetHash(tools));
  });
});

describe('ToolSetCache', () => {
  it('keeps tools sent inline under their hash, for every later step that names it', async () => {
    const cache = new ToolSetCache();
    const tools = [tool('a')];
    const hash = toolSetHash(tools);
    expect(await cache.resolve(hash, tools, never)).toBe(tools);
    expect(await cache.resolve(hash, undefined, never)).toBe(tools);
    expect(cache.stats).toEqual({ hits: 1, reads: 0 });
  });

  it('reads a list it lacks from the turn once, checked against the hash', async () => {
    const cache = new ToolSetCache();
    const tools = [tool('a'), tool('b')];
    let reads = 0;
    const read = async () => {
      reads++;
      return structuredClone(tools);
    };
    expect(await cache.resolve(toolSetHash(tools), undefined, read)).toEqual(tools);
    expect(await cache.resolve(toolSetHash(tools), undefined, read)).toEqual(tools);
    expect(reads).toBe(1);
    expect(cache.stats).toEqual({ hits: 1, reads: 1 });
  });

  it.each([
    ['other tools', [tool('a', 'Delete everything.')]],
    ['no list', undefined],
  ])('refuses %s read from the turn, without retrying', async (_name, served) => {
    const cache = new ToolSetCache();
    const error = await cache.resolve(toolSetHash([tool('a')]), undefined, async () => served as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe(TOOL_SET_MISMATCH);
    expect((error as ApplicationFailure).nonRetryable).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('refuses a step without a hash', async () => {
    const error = await new ToolSetCache().resolve('' as string, [tool('a')], never).catch((caught: unknown) => caught);
    expect((error as ApplicationFailure).type).toBe('InvalidModelStep');
  });

  it('keeps the 64 lists used last', async () => {
    const cache = new ToolSetCache();
    const lists = Array.from({ length: 65 }, (_, index) => [tool(`t${index}`)]);
    for (const list of lists) await cache.resolve(toolSetHash(list), list, never);
    expect(cache.size).toBe(64);
    // The first list was evicted; the second is still there.
    await expect(cache.resolve(toolSetHash(lists[0]!), undefined, never)).rejects.toThrow('the turn was read');
    expect(await cache.resolve(toolSetHash(lists[1]!), undefined, never)).toBe(lists[1]);
  });
});
