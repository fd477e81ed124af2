/**
 * Starting the dev server on a busy machine: a port taken between the moment it was picked and
 * the moment the server binds it makes the server exit, and the start tries again with fresh ports.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, startDevServer } from '../../scripts/dev-server.js';

describe('starting the dev server', () => {
  it('starts again when a port it binds is taken, and says so; gives up after 3 starts with the reason', async () => {
    const port = await freePort();
    // The readiness check connects to whatever listens there: the holder drops those connections.
    const holder = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const log: string[] = [];
    try {
      // The port is held for good, so every start fails the same way: the retries are what is seen.
      await expect(startDevServer({ port, log: (line) => log.push(line) })).rejects.toThrow(/address already in use/);
    } finally {
      holder.close();
    }
    expect(log.filter((line) => /starting again \(\d\/3\)/.test(line))).toHaveLength(2);

    // Freed, the same port serves.
    const server = await startDevServer({ port });
    try {
      expect(server.address).toBe(`127.0.0.1:${port}`);
    } finally {
      await server.stop();
    }
  });
});
