/**
 * The per-server connection pool without a server: connections here are stand-ins that record
 * what the pool does with them (the real ones are exercised in test/integration/mcp.test.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpConnectionEvents, McpTool } from '../../activities/mcp/mcp-connection.js';
import { McpConnectionPool, type PooledConnection } from '../../activities/mcp/mcp-connection-pool.js';
import { callEnd } from '../../activities/mcp/mcp-tool-source.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

class StandIn implements PooledConnection {
  usable = true;
  closed = false;
  listings = 0;
  constructor(
    readonly id: number,
    readonly events: McpConnectionEvents,
  ) {}
  async listTools(): Promise<McpTool[]> {
    this.listings++;
    return [{ name: `tool-from-${this.id}`, inputSchema: { type: 'object' } }];
  }
  async callTool() {
    return { content: [] };
  }
  async close() {
    this.closed = true;
    this.usable = false;
  }
}

function pool(limits = { maxConnections: 3, idleTimeoutMs: 1_000 }) {
  const opened: StandIn[] = [];
  const made = new McpConnectionPool<StandIn>(
    'srv',
    (events) => {
      const connection = new StandIn(opened.length, events);
      opened.push(connection);
      return connection;
    },
    limits,
  );
  return { pool: made, opened };
}

/** Holds a connection until `free()` is called. */
function hold(p: McpConnectionPool<StandIn>, end: 'reusable' | 'retire' = 'reusable') {
  let free!: () => void;
  const released = new Promise<void>((resolve) => (free = resolve));
  let held: StandIn | undefined;
  const done = p.with(
    async (connection) => {
      held = connection;
      await released;
      return connection;
    },
    () => end,
  );
  return { done, free, held: () => held };
}

/** Lets the pool's promises settle. */
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

afterEach(() => vi.useRealTimers());

describe('McpConnectionPool', () => {
  it('reuses one connection for calls one after another', async () => {
    const { pool: p, opened } = pool();
    for (let i = 0; i < 3; i++) await p.with(async (c) => c, () => 'reusable');
    expect(opened).toHaveLength(1);
    expect(p.size).toBe(1);
  });

  it('gives calls that overlap a connection each, and a later call one of them', async () => {
    const { pool: p, opened } = pool();
    const a = hold(p);
    const b = hold(p);
    await flush();
    expect(a.held()).toBeDefined();
    expect(b.held()).toBeDefined();
    expect(a.held()).not.toBe(b.held());
    a.free();
    b.free();
    await Promise.all([a.done, b.done]);
    const next = await p.with(async (c) => c, () => 'reusable');
    expect(opened).toHaveLength(2);
    expect([a.held(), b.held()]).toContain(next);
  });

  it('makes a call beyond maxConnections wait for a connection to come free, or for its abort', async () => {
    const { pool: p, opened } = pool({ maxConnections: 1, idleTimeoutMs: 1_000 });
    const a = hold(p);
    await flush();
    let second: StandIn | undefined;
    const waiting = p.with(async (c) => (second = c), () => 'reusable');
    const aborted = new AbortController();
    const gaveUp = p.with(async (c) => c, () => 'reusable', aborted.signal);
    aborted.abort(new Error('turn cancelled'));
    await expect(gaveUp).rejects.toThrow('turn cancelled');
    expect(second).toBeUndefined();
    a.free();
    await waiting;
    expect(second).toBe(a.held());
    expect(opened).toHaveLength(1);
  });

  it('closes a retired connection and opens a new one for the next call; the tool list is asked again, as nobody was left to hear of changes', async () => {
    const { pool: p, opened } = pool();
    await p.listTools();
    await p.with(async (c) => c, () => 'retire');
    expect(await p.listTools()).toEqual([expect.objectContaining({ name: 'tool-from-1' })]);
    expect(opened[0].closed).toBe(true);
    const next = await p.with(async (c) => c, () => 'reusable');
    expect(next).toBe(opened[1]);
    expect(opened).toHaveLength(2);
    expect(p.size).toBe(1);
  });

  it('passes a failure through and still takes the connection back', async () => {
    const { pool: p, opened } = pool();
    await expect(p.with(async () => Promise.reject(new Error('tool failed')), () => 'reusable')).rejects.toThrow('tool failed');
    await p.with(async (c) => c, () => 'reusable');
    expect(opened).toHaveLength(1);
  });

  it('closes idle connections beyond the first after the idle timeout', async () => {
    vi.useFakeTimers();
    const { pool: p, opened } = pool();
    const a = hold(p);
    const b = hold(p);
    await vi.advanceTimersByTimeAsync(0);
    a.free();
    b.free();
    await Promise.all([a.done, b.done]);
    expect(p.size).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(p.size).toBe(1);
    expect(opened.filter((c) => c.closed)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(p.size).toBe(1);
  });

  it('caches the tool list until a connection announces a change, or drops', async () => {
    const { pool: p, opened } = pool();
    await p.listTools();
    await p.listTools();
    expect(opened[0].listings).toBe(1);
    opened[0].events.listChanged();
    await p.listTools();
    expect(opened[0].listings).toBe(2);
    opened[0].usable = false;
    opened[0].events.closed();
    expect(p.size).toBe(0);
    expect(await p.listTools()).toEqual([expect.objectContaining({ name: 'tool-from-1' })]);
  });

  it('fails waiting calls and refuses new ones once closed', async () => {
    const { pool: p, opened } = pool({ maxConnections: 1, idleTimeoutMs: 1_000 });
    const a = hold(p);
    await flush();
    const waiting = p.with(async (c) => c, () => 'reusable');
    await p.close();
    await expect(waiting).rejects.toThrow('shutting down');
    await expect(p.with(async (c) => c, () => 'reusable')).rejects.toThrow('shutting down');
    expect(opened[0].closed).toBe(true);
    a.free();
    await a.done;
  });
});

describe('callEnd', () => {
  const running = new AbortController().signal;
  it('keeps a connection after a result or an error the server answered', () => {
    expect(callEnd({ ok: true }, running)).toBe('reusable');
    expect(callEnd({ ok: false, error: new McpError(ErrorCode.InvalidParams, 'bad arguments') }, running)).toBe('reusable');
  });
  it('retires it after a cancelled call, a timeout or a lost connection, when the server may still be at work', () => {
    const cancelled = new AbortController();
    cancelled.abort();
    expect(callEnd({ ok: true }, cancelled.signal)).toBe('retire');
    expect(callEnd({ ok: false, error: new McpError(ErrorCode.RequestTimeout, 'timed out') }, running)).toBe('retire');
    expect(callEnd({ ok: false, error: new McpError(ErrorCode.ConnectionClosed, 'closed') }, running)).toBe('retire');
    expect(callEnd({ ok: false, error: new Error('socket hang up') }, running)).toBe('retire');
  });
});
