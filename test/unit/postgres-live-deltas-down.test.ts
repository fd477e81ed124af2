/**
 * `PostgresLiveDeltas` with no database to reach (a port nobody listens on): publishing returns at
 * once and never throws, the outage is reported once however many pieces are dropped, and `close`
 * ends the listening side's retries.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { PostgresLiveDeltas } from '../../activities/postgres-live/postgres-live-deltas.js';

/** A port that refuses connections: bound, then closed. */
async function refusingPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('PostgresLiveDeltas without a database', () => {
  it('drops pieces without throwing, and reports the outage once', async () => {
    const warnings: string[] = [];
    const channel = new PostgresLiveDeltas({ connectionString: `postgresql://u:secret@127.0.0.1:${await refusingPort()}/db`, onWarning: (message) => warnings.push(message) });
    const received: unknown[] = [];
    channel.subscribe('w', (piece) => received.push(piece));
    for (let index = 0; index < 50; index++) {
      expect(channel.publish('w', { event: { type: 'text-delta', text: 'x', step: 1, attempt: 1 }, start: index })).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await expect.poll(() => warnings.length, { timeout: 20_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(warnings.filter((message) => message.includes('cannot publish'))).toHaveLength(1);
    expect(warnings.filter((message) => message.includes('cannot listen'))).toHaveLength(1);
    // The password never shows.
    expect(warnings.join('\n')).not.toContain('secret');
    expect(received).toEqual([]);
    await channel.close();
  });

  it('refuses a channel name that is not an SQL identifier', () => {
    expect(() => new PostgresLiveDeltas({ connectionString: 'postgresql://127.0.0.1/db', channel: 'live"; DROP TABLE x; --' })).toThrow(/SQL identifier/);
    expect(() => new PostgresLiveDeltas({})).toThrow(/connectionString or connection/);
  });
});
