/** The ports of a cluster's parts: `npm run cluster`'s defaults, which are taken, and free ones for a test's own cluster. */
import net from 'node:net';

export interface ClusterPorts {
  postgres: number;
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  ui: number;
}

/**
 * `npm run cluster`: Temporal's usual ports (clients default to 127.0.0.1:7233), the Web UI where
 * docker-compose.yml puts it, PostgreSQL next to the usual 5432 so a system PostgreSQL can stay.
 */
export const DEFAULT_CLUSTER_PORTS: ClusterPorts = {
  postgres: 5433,
  frontend: 7233,
  frontendHttp: 7243,
  frontendMembership: 6933,
  history: 7234,
  historyMembership: 6934,
  matching: 7235,
  matchingMembership: 6935,
  worker: 7239,
  workerMembership: 6939,
  ui: 8080,
};

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The ports of `ports` that something on 127.0.0.1 already listens on, by name. */
export async function portsInUse(ports: ClusterPorts): Promise<Array<[keyof ClusterPorts, number]>> {
  const entries = Object.entries(ports) as Array<[keyof ClusterPorts, number]>;
  const free = await Promise.all(entries.map(([, port]) => portIsFree(port)));
  return entries.filter((_, index) => !free[index]);
}

/**
 * Free ports for a cluster of its own (tests). Drawn from 20000–32767, on purpose:
 * - the server stores each service's membership port in cluster_membership.rpc_port, a
 *   PostgreSQL SMALLINT, so a port above 32767 fails the server at start
 *   ("value ... is out of range for type smallint");
 * - below Linux's ephemeral range (32768+), so no outgoing connection takes one meanwhile.
 */
export async function randomClusterPorts(): Promise<ClusterPorts> {
  const taken = new Set<number>();
  const pick = async (): Promise<number> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const port = 20_000 + Math.floor(Math.random() * 12_768);
      if (taken.has(port) || !(await portIsFree(port))) continue;
      taken.add(port);
      return port;
    }
    throw new Error('No free port between 20000 and 32767 after 200 tries.');
  };
  const ports = {} as ClusterPorts;
  for (const name of Object.keys(DEFAULT_CLUSTER_PORTS) as Array<keyof ClusterPorts>) ports[name] = await pick();
  return ports;
}
