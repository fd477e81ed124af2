/**
 * The retries of turnpike's connections (connection/query-retry.ts): a query the server refused
 * because the workflow's query buffer was full is asked again within tens of milliseconds; every
 * other status keeps the SDK's own retries.
 */
import { defaultGrpcRetryOptions } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { FULL_QUERY_BUFFER_INITIAL_INTERVAL_MS, isFullQueryBuffer, turnpikeGrpcRetryOptions } from '../../connection/query-retry.js';
import { temporalConnectionOptions } from '../../connection/temporal-connection.js';

/** The server's refusal, as the frontend sends it (temporalio/temporal, service/history/consts). */
const fullBuffer = {
  code: 8,
  details: 'consistent query buffer is full, this may be caused by too many queries and workflow not able to process query fast enough',
  metadata: undefined as never,
};
const tooLarge = { code: 8, details: 'Received message larger than max (5000000 vs 4194304)', metadata: undefined as never };
const unavailable = { code: 14, details: 'Connection dropped', metadata: undefined as never };

/** The range of a delay with the SDK's ±20 % jitter. */
const within = (value: number, base: number) => value >= base * 0.8 - 1e-9 && value <= base * 1.2 + 1e-9;

describe("turnpike's gRPC retries", () => {
  it('tell a full query buffer from other RESOURCE_EXHAUSTED refusals', () => {
    expect(isFullQueryBuffer(fullBuffer)).toBe(true);
    expect(isFullQueryBuffer(tooLarge)).toBe(false);
    expect(isFullQueryBuffer({ ...fullBuffer, code: 14 })).toBe(false);
  });

  it('ask a query refused for a full buffer again within tens of milliseconds, where the SDK waits 1.4–2 s', () => {
    const ours = turnpikeGrpcRetryOptions();
    const sdk = defaultGrpcRetryOptions();
    for (let sample = 0; sample < 50; sample++) {
      expect(within(ours.delayFunction(1, fullBuffer), 1.7 * FULL_QUERY_BUFFER_INITIAL_INTERVAL_MS)).toBe(true);
      expect(within(sdk.delayFunction(1, fullBuffer), 1_700)).toBe(true);
      expect(within(ours.delayFunction(3, fullBuffer), 1.7 ** 3 * FULL_QUERY_BUFFER_INITIAL_INTERVAL_MS)).toBe(true);
    }
    expect(ours.retryableDecider(1, fullBuffer)).toBe(true);
    expect(ours.retryableDecider(10, fullBuffer)).toBe(false);
  });

  it("keep the SDK's retries for every other status", () => {
    const ours = turnpikeGrpcRetryOptions();
    for (let sample = 0; sample < 50; sample++) {
      expect(within(ours.delayFunction(1, tooLarge), 1_700)).toBe(true);
      expect(within(ours.delayFunction(2, unavailable), 1.7 ** 2 * 100)).toBe(true);
    }
    expect(ours.retryableDecider(1, unavailable)).toBe(true);
    expect(ours.retryableDecider(1, { ...unavailable, code: 3 })).toBe(false);
  });

  it('are the retries of every connection turnpike opens, unless its options bring interceptors of their own', () => {
    expect(temporalConnectionOptions({}).interceptors).toHaveLength(1);
    const own = [() => undefined as never];
    expect(temporalConnectionOptions({ interceptors: own }).interceptors).toBe(own);
    expect(temporalConnectionOptions({ interceptors: [] }).interceptors).toEqual([]);
  });
});
