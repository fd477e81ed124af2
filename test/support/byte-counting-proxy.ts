/**
 * A TCP proxy that counts the bytes each way, put between a worker and the server to measure
 * what a workflow task's completion carries (a worker sends nothing else while a turn is parked).
 */
import net from 'node:net';

export interface ByteCountingProxy {
  address: string;
  /** Bytes from the client (the worker) to the server, and back. */
  readonly sent: { up: number; down: number };
  close(): Promise<void>;
}

export async function startByteCountingProxy(target: string): Promise<ByteCountingProxy> {
  const [host, port] = target.split(':');
  const sent = { up: 0, down: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(port), host);
    for (const side of [socket, upstream]) {
      sockets.add(side);
      side.on('error', () => side.destroy());
      side.on('close', () => sockets.delete(side));
    }
    socket.on('data', (chunk) => {
      sent.up += chunk.length;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      sent.down += chunk.length;
      socket.write(chunk);
    });
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    sent,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
