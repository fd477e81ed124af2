/**
 * A port for a server a test starts itself (PostgreSQL, an API process): free now, in
 * 20000–32767, below Linux's ephemeral range, so an outgoing connection cannot take it between the
 * pick and the bind (as the cluster test picks them, scripts/cluster-ports.ts).
 */
import net from 'node:net';

export async function freeLowPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('No free port between 20000 and 32767 after 200 tries.');
}
