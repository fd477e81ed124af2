/**
 * Tenant A's service in the fleet figure, as a process of its own: it connects to Temporal,
 * prints "ready {}", waits for SIGUSR2, then starts `FLEET_TURNS` batch turns of tenant A with
 * `startTurns`, `FLEET_START_CONCURRENCY` at a time, with the ids `<FLEET_TURN_PREFIX>-<index>`, prints
 * "started {ms}" and waits to be ended. A's starts thus run beside the bench's own client (B's
 * turns and the measurements), not inside it, as a second customer's service would.
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TURNPIKE_TASK_QUEUE, TURNPIKE_MODEL_TASK_QUEUE (optional).
 */
import { Client } from '@temporalio/client';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { connectTemporal } from '../../connection/temporal-connection.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startTenantA } from './fleet-turn.js';

const connection = await connectTemporal({ address: process.env.TEMPORAL_ADDRESS! });
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE!, dataConverter: turnpikeDataConverter });
const modelTaskQueue = process.env.TURNPIKE_MODEL_TASK_QUEUE;
const turnpike = new TurnpikeClient({ client, taskQueue: process.env.TURNPIKE_TASK_QUEUE!, ...(modelTaskQueue ? { modelTaskQueue } : {}) });
// The connection is open before the burst: a first call now, then wait to be told to go.
await client.workflowService.getSystemInfo({});
// A signal's listener does not keep Node running: a timer does, until the signal comes.
const waiting = setInterval(() => {}, 60_000);
const go = new Promise((resolve) => process.once('SIGUSR2', resolve));
console.log('ready {}');
await go;
clearInterval(waiting);
const started = Date.now();
await startTenantA(turnpike, Number(process.env.FLEET_TURNS), process.env.FLEET_TURN_PREFIX!, Number(process.env.FLEET_START_CONCURRENCY));
console.log(`started ${JSON.stringify({ ms: Date.now() - started })}`);
await connection.close();
// Kept until the bench has read its CPU time, and ended by it (SIGTERM).
setInterval(() => {}, 60_000);
