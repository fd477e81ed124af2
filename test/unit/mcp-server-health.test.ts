import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { McpServerHealth } from '../../activities/mcp/mcp-server-health.js';
import { checkMcpServers, mcpServerTimings } from '../../activities/mcp/mcp-servers.js';

const timings = { listTimeoutMs: 5_000, unavailableTimeoutMs: 60_000, reconnect: { initialIntervalMs: 1_000, maximumIntervalMs: 8_000 } };

function health(relist: () => Promise<unknown>) {
  const logged: string[] = [];
  const gauge: Array<[number, Record<string, string>]> = [];
  const telemetry = {
    logger: { info: (message: string) => logged.push(`info ${message}`), warn: (message: string) => logged.push(`warn ${message}`) },
    meter: { createGauge: () => ({ set: (value: number, tags: Record<string, string>) => gauge.push([value, tags]) }) } as never,
  };
  return { tracker: new McpServerHealth('crm', false, timings, relist, telemetry), logged, gauge };
}

describe('McpServerHealth', () => {
  beforeEach(() => vi.useFakeTimers({ now: new Date('2026-11-26T00:00:00Z') }));
  afterEach(() => vi.useRealTimers());

  it('is unknown until a listing, up after one succeeds', () => {
    const { tracker, gauge } = health(async () => undefined);
    expect(tracker.status()).toEqual({ server: 'crm', state: 'unknown', required: false });
    tracker.listed(3);
    expect(tracker.status()).toEqual({ server: 'crm', state: 'up', required: false, since: '2026-11-26T00:00:00.000Z', tools: 3 });
    expect(gauge).toEqual([[1, { server: 'crm' }]]);
  });

  it('retries a failed server in the background, doubling the wait up to the maximum, until it answers', async () => {
    const relist = vi.fn(async (): Promise<unknown> => undefined);
    const { tracker, logged, gauge } = health(relist);
    tracker.failed('connection refused');
    expect(tracker.down).toBe(true);
    expect(tracker.status()).toMatchObject({ state: 'down', error: 'connection refused', failures: 1, nextAttemptAt: '2026-11-26T00:00:01.000Z' });
    expect(tracker.reason).toBe('unavailable since 2026-11-26T00:00:00.000Z (1 failed listing): connection refused');
    // Each retry's listing fails again in this test: the waits are 1, 2, 4, 8, 8 s.
    const waits: number[] = [];
    relist.mockImplementation(async () => tracker.failed('connection refused'));
    for (let attempt = 0; attempt < 5; attempt++) {
      const next = Date.parse(tracker.status().nextAttemptAt!) - Date.now();
      waits.push(next);
      await vi.advanceTimersByTimeAsync(next);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(relist).toHaveBeenCalledTimes(5);
    relist.mockImplementation(async () => tracker.listed(2));
    await vi.advanceTimersByTimeAsync(8_000);
    expect(tracker.status()).toMatchObject({ state: 'up', tools: 2 });
    expect(tracker.status().nextAttemptAt).toBeUndefined();
    expect(gauge.map(([value]) => value)).toEqual([0, 1]);
    expect(logged[0]).toBe('warn MCP server "crm" could not list its tools: connection refused; trying again in 1000 ms');
    expect(logged.at(-1)).toBe('info MCP server "crm" answers again');
    // Up again: no retry is pending.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(relist).toHaveBeenCalledTimes(6);
  });

  it('stops retrying once closed', async () => {
    const relist = vi.fn(async (): Promise<unknown> => undefined);
    const { tracker } = health(relist);
    tracker.failed('down');
    tracker.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(relist).not.toHaveBeenCalled();
  });
});

describe('a server\'s timings', () => {
  it('default to a 5 s list timeout, 1 s to 1 min reconnects and a 1 min unavailable timeout, and take durations', () => {
    expect(mcpServerTimings('a', { command: 'x' })).toEqual({ listTimeoutMs: 5_000, unavailableTimeoutMs: 60_000, reconnect: { initialIntervalMs: 1_000, maximumIntervalMs: 60_000 } });
    expect(mcpServerTimings('a', { command: 'x', listTimeout: '2s', unavailableTimeout: '3s', reconnect: { initialInterval: 200, maximumInterval: '1s' } })).toEqual({
      listTimeoutMs: 2_000,
      unavailableTimeoutMs: 3_000,
      reconnect: { initialIntervalMs: 200, maximumIntervalMs: 1_000 },
    });
  });

  it('refuse what is not a positive duration, naming the field, when the worker starts', () => {
    expect(() => checkMcpServers({ a: { command: 'x', listTimeout: 0 } })).toThrow("mcpServers.a: listTimeout must be a positive duration (milliseconds or a string such as '5s'), got 0");
    expect(() => checkMcpServers({ a: { command: 'x', listTimeout: 'soon' as never } })).toThrow(/mcpServers\.a: listTimeout must be a positive duration/);
    expect(() => checkMcpServers({ a: { command: 'x', reconnect: { initialInterval: '10s', maximumInterval: '1s' } } })).toThrow(
      'mcpServers.a: reconnect.maximumInterval must not be below reconnect.initialInterval',
    );
    expect(() => checkMcpServers({ a: { command: 'x', unavailableTimeout: -1 } })).toThrow(/mcpServers\.a: unavailableTimeout must be a positive duration/);
    expect(() => checkMcpServers({ a: { command: 'x', required: 'yes' as never } })).toThrow('mcpServers.a: required must be true or false');
  });
});
