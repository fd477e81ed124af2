/**
 * How fast one key of the PostgreSQL token counter places bookings (issue 55): `COUNTERS` counters,
 * as many worker processes would hold, each with its pool of 4 connections, book for one key from
 * `LOOPS` concurrent loops each, for `SECONDS`, with a limit no booking reaches (so every booking
 * goes now and the figure is the lock's throughput, not the limit's). Then the same while each
 * booking is settled, as every call does.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { PostgresModelTokenCounter } from '../../activities/model-tokens/postgres-token-counter.js';
import { percentile, round } from '../stats.js';

const COUNTERS = 3;
const LOOPS = 8;
const SECONDS = 5;

export interface TokenCounterRate {
  counters: number;
  concurrentBookers: number;
  seconds: number;
  /** Bookings placed a second, with their settles, for one key. */
  bookingsPerSecond: number;
  /** Time from a booking's call to its answer, ms. */
  bookMs: { p50: number; p95: number };
}

export async function measureTokenCounterRate(connectionString: string): Promise<TokenCounterRate> {
  const counters = Array.from({ length: COUNTERS }, () => new PostgresModelTokenCounter({ connectionString, table: 'bench_token_rate' }));
  const key = `bench-${randomUUID()}`;
  try {
    // The table, created once before the clock starts.
    await counters[0]!.book({ key, id: 'warm-up', tokens: 1, limit: 1_000_000_000, windowMs: 60_000 });
    const latencies: number[] = [];
    const end = performance.now() + SECONDS * 1_000;
    let booked = 0;
    await Promise.all(
      counters.flatMap((counter, index) =>
        Array.from({ length: LOOPS }, async (_, loop) => {
          for (let call = 0; performance.now() < end; call++) {
            const id = `${index}-${loop}-${call}`;
            const started = performance.now();
            await counter.book({ key, id, tokens: 100, limit: 1_000_000_000, windowMs: 60_000 });
            latencies.push(performance.now() - started);
            await counter.settle(key, id, 90);
            booked++;
          }
        }),
      ),
    );
    const sorted = latencies.sort((a, b) => a - b);
    return {
      counters: COUNTERS,
      concurrentBookers: COUNTERS * LOOPS,
      seconds: SECONDS,
      bookingsPerSecond: round(booked / SECONDS, 0),
      bookMs: { p50: round(percentile(sorted, 50), 1), p95: round(percentile(sorted, 95), 1) },
    };
  } finally {
    await Promise.all(counters.map((counter) => counter.close()));
  }
}
