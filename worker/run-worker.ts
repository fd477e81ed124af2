/**
 * `runWorker`: a turnpike-only worker process as operators run it — connection from the
 * environment, Prometheus metrics, a health endpoint, graceful shutdown on SIGTERM/SIGINT.
 *
 *   await runWorker({ tools: [lookupOrder, issueRefund] });   // returns once the worker has shut down
 *
 * Every setting has an environment variable, so a container needs no code change (README,
 * "Configuration").
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NativeConnection, Runtime, type RuntimeOptions, type Worker } from '@temporalio/worker';
import { createWorker, type CreateWorkerOptions } from './create-worker.js';
import { connectionOptionsFromEnvironment } from './environment.js';
import { TurnpikePlugin } from './plugin.js';
import { modelCapacityFromEnvironment } from './model-capacity.js';
import { tenantBudgetsFromEnvironment } from '../activities/tenant-budgets/tenant-budget-options.js';
import { livenessOf } from './liveness.js';

export interface RunWorkerOptions extends Omit<CreateWorkerOptions, 'connection' | 'namespace'> {
  /**
   * `host:port` where the SDK's and turnpike's metrics are served in Prometheus format at
   * `/metrics`. Default `TURNPIKE_METRICS_ADDRESS`; no metrics endpoint when neither is set.
   */
  metricsAddress?: string;
  /** Port of `GET /healthz` (alive) and `GET /readyz` (polling). Default `TURNPIKE_HEALTH_PORT`; none when unset. */
  healthPort?: number;
  /** Default `TURNPIKE_HEALTH_HOST`, else 127.0.0.1 (0.0.0.0 in a container). */
  healthHost?: string;
  /** Other Runtime options (logger, tracing), applied once per process before the first connection. */
  runtimeOptions?: RuntimeOptions;
  /** Called once the worker polls, with the addresses it serves. */
  onReady?(ready: { taskQueue: string; address: string; namespace: string; healthUrl?: string; metricsUrl?: string }): void;
}

function numberFromEnvironment(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65_535) throw new Error(`${name} must be a port number (got "${value}")`);
  return parsed;
}

/**
 * `/healthz`: the process is alive: 503 once the worker has failed, or has been stopping for
 * longer than its shutdown grace time allows (worker/liveness.ts). `/readyz`: the worker is
 * polling its task queue (503 while starting or draining). `/mcp-servers`: what the worker knows of each MCP server it declares
 * (up, down with the error and the next retry, or unknown until a turn needs it).
 */
async function serveHealth(worker: Worker, host: string, port: number): Promise<http.Server> {
  const plugin = worker.options.plugins?.find((candidate): candidate is TurnpikePlugin => candidate instanceof TurnpikePlugin);
  const liveness = livenessOf(() => worker.getState(), worker.options.shutdownGraceTimeMs);
  const server = http.createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.url === '/mcp-servers') {
      void (plugin?.mcpServers() ?? Promise.resolve([])).then(
        (servers) => reply(200, { servers }),
        (error: unknown) => reply(500, { error: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    const { alive, state, stoppingSince } = liveness.check();
    const ready = state === 'RUNNING';
    const status = request.url === '/healthz' ? (alive ? 200 : 503) : request.url === '/readyz' ? (ready ? 200 : 503) : 404;
    const since = stoppingSince === undefined ? {} : { stoppingSince: new Date(stoppingSince).toISOString() };
    reply(status, status === 404 ? { error: 'GET /healthz, /readyz or /mcp-servers' } : { state, taskQueue: worker.options.taskQueue, ...since });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}

export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { metricsAddress = process.env.TURNPIKE_METRICS_ADDRESS || undefined, runtimeOptions, onReady, ...rest } = options;
  const healthPort = options.healthPort ?? numberFromEnvironment('TURNPIKE_HEALTH_PORT');
  const healthHost = options.healthHost ?? process.env.TURNPIKE_HEALTH_HOST ?? '127.0.0.1';
  // Model calls on a rate-limited queue of their own (worker/model-capacity.ts), when configured.
  const modelCapacity = options.modelCapacity ?? modelCapacityFromEnvironment();
  // Budgets per tenant over time (activities/tenant-budgets/): a store from the environment is closed here.
  const ownedBudgets = options.tenantBudgets ? undefined : tenantBudgetsFromEnvironment();
  const tenantBudgets = options.tenantBudgets ?? ownedBudgets;
  if (metricsAddress || runtimeOptions) {
    // Temporal Core serves the metrics; custom ones (activities' and workflows' metricMeter) go
    // through the same exporter, so one scrape sees the SDK's and turnpike's figures.
    Runtime.install({
      ...runtimeOptions,
      ...(metricsAddress ? { telemetryOptions: { ...runtimeOptions?.telemetryOptions, metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}),
    });
  }
  const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
  const connection = await NativeConnection.connect(connectionOptions).catch(async (error: unknown) => {
    await ownedBudgets?.store.close?.();
    throw error;
  });
  let health: http.Server | undefined;
  try {
    const { healthPort: _port, healthHost: _host, ...workerOptions } = rest;
    const worker = await createWorker({ ...workerOptions, ...(modelCapacity ? { modelCapacity } : {}), ...(tenantBudgets ? { tenantBudgets } : {}), connection, namespace });
    // The SDK's shutdown signals (SIGINT, SIGTERM, ...) stop polling, let in-flight activities
    // finish within shutdownGraceTime, and then resolve run().
    const running = worker.run();
    if (healthPort !== undefined) health = await serveHealth(worker, healthHost, healthPort);
    const healthAddress = health?.address() as AddressInfo | undefined;
    onReady?.({
      taskQueue: worker.options.taskQueue,
      address: connectionOptions.address ?? 'localhost:7233',
      namespace,
      ...(healthAddress ? { healthUrl: `http://${healthHost}:${healthAddress.port}` } : {}),
      ...(metricsAddress ? { metricsUrl: `http://${metricsAddress}/metrics` } : {}),
    });
    await running;
  } finally {
    health?.close();
    await ownedBudgets?.store.close?.();
    await connection.close();
  }
}
