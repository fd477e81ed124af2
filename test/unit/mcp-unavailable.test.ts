/** How long a step waits for an MCP server that cannot list its tools (activities/mcp/mcp-unavailable.ts). */
import { describe, expect, it } from 'vitest';
import { unavailableFailure, unavailableServer, unavailableServersOf } from '../../activities/mcp/mcp-unavailable.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const policy = { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 60_000, maximumAttempts: 10 };

describe('a server a step waits for', () => {
  it('is measured from the step\'s first scheduling, or from when the worker saw it go down if that is later', () => {
    const timing = { unavailableTimeoutMs: 3_000, downSinceMs: T0 - 3_600_000 };
    expect(unavailableServer('crm', 'refused', timing, { scheduledTimestampMs: T0 }, T0 + 500)).toEqual({
      server: 'crm',
      error: 'refused',
      since: '2026-01-01T00:00:00.000Z',
      giveUpAt: '2026-01-01T00:00:03.000Z',
    });
    const later = unavailableServer('crm', 'refused', { ...timing, downSinceMs: T0 + 10_000 }, { scheduledTimestampMs: T0 }, T0 + 10_500);
    expect(later.since).toBe('2026-01-01T00:00:10.000Z');
    expect(unavailableServer('crm', 'x'.repeat(5_000), timing, { scheduledTimestampMs: T0 }, T0).error).toHaveLength(1_001);
  });

  it('fails the attempt retryably before the bound, the last wait shortened to end at it, and not retryably after it', () => {
    const servers = [unavailableServer('crm', 'refused', { unavailableTimeoutMs: 3_000, downSinceMs: T0 }, { scheduledTimestampMs: T0 }, T0)];
    const first = unavailableFailure('MCP server "crm" could not list its tools: refused', servers, { scheduledTimestampMs: T0, attempt: 1, retryPolicy: policy }, T0 + 10);
    expect(first).toMatchObject({ type: 'McpServerUnavailable', nonRetryable: false, nextRetryDelay: undefined });
    expect(unavailableServersOf(first)).toEqual(servers);
    const second = unavailableFailure('…', servers, { scheduledTimestampMs: T0, attempt: 2, retryPolicy: policy }, T0 + 1_500);
    expect(second).toMatchObject({ nonRetryable: false, nextRetryDelay: 1_500 });
    const last = unavailableFailure('MCP server "crm" could not list its tools: refused', servers, { scheduledTimestampMs: T0, attempt: 3, retryPolicy: policy }, T0 + 3_000);
    expect(last).toMatchObject({ type: 'McpServerUnavailable', nonRetryable: true });
    expect(last.message).toBe('MCP server "crm" could not list its tools: refused (unavailable: "crm" since 2026-01-01T00:00:00.000Z; the step gave up at its unavailableTimeout)');
    expect(unavailableServersOf(new Error('other'))).toBeUndefined();
  });
});
