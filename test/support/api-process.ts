/**
 * The HTTP API as its own process, for tests that need two API processes behind one Temporal
 * (decisions arriving at the same instant through both): its own Connection, TurnpikeClient and
 * fastify server. Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TURNPIKE_TASK_QUEUE, API_OIDC (OidcOptions as JSON),
 * API_ADMIN_GROUPS (comma-separated). Prints `ready {"base":"http://127.0.0.1:<port>"}` once it listens.
 */
import { Client, Connection } from '@temporalio/client';
import { buildApi } from '../../api/index.js';
import { TurnpikeClient } from '../../client/index.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';

// The retries of every Connection turnpike opens (connection/query-retry.ts), as the harness's.
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS!, interceptors: [turnpikeGrpcRetryInterceptor()] });
const client = new TurnpikeClient({ client: new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default', dataConverter: turnpikeDataConverter }), taskQueue: process.env.TURNPIKE_TASK_QUEUE! });
const api = await buildApi({
  client,
  oidc: JSON.parse(process.env.API_OIDC!),
  access: { adminGroups: (process.env.API_ADMIN_GROUPS ?? '').split(',').filter(Boolean) },
});
const base = await api.listen({ host: '127.0.0.1', port: 0 });
console.log(`ready ${JSON.stringify({ taskQueue: process.env.TURNPIKE_TASK_QUEUE, base })}`);
process.once('SIGTERM', () => void api.close().then(() => connection.close()).then(() => process.exit(0)));
