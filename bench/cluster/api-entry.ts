/**
 * An HTTP API process of the cluster bench, as `npm run api` builds it (api/main.ts): static
 * tokens, the workers' live channel from TURNPIKE_LIVE_POSTGRES_URL, and one route of its own,
 * `GET /bench/process` (no auth: the bench's port is on 127.0.0.1 only), answering this process's
 * RSS and what its `LISTEN` connection has received. Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TURNPIKE_TASK_QUEUE, TURNPIKE_API_TOKENS, TURNPIKE_API_PORT. Prints `ready` once it listens.
 */
import { buildApi, parseTokenMap } from '../../api/index.js';
import { liveDeltasFromEnvironment } from '../../activities/postgres-live/postgres-live-deltas.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';

const liveDeltas = liveDeltasFromEnvironment();
if (!liveDeltas) throw new Error('the cluster bench runs its API processes with TURNPIKE_LIVE_POSTGRES_URL');
await liveDeltas.ready();
const client = await TurnpikeClient.connect({ liveDeltas, taskQueue: process.env.TURNPIKE_TASK_QUEUE! });
const api = await buildApi({ client, tokens: parseTokenMap(process.env.TURNPIKE_API_TOKENS) });
api.get('/bench/process', async () => ({ rss: process.memoryUsage().rss, liveReceived: liveDeltas.received }));
await api.listen({ host: '127.0.0.1', port: Number(process.env.TURNPIKE_API_PORT) });
console.log('ready');
process.once('SIGTERM', () => void api.close().then(() => client.close()).then(() => liveDeltas.close()).then(() => process.exit(0)));
