/**
 * What a `TurnpikeClient` is made of (its options, documented where they are set) and how
 * `TurnpikeClient.connect` makes them from the environment: a Temporal connection that takes
 * answers as large as Temporal sends, and turnpike's data converter over the content store.
 */
import { Client, type ConnectionOptions } from '@temporalio/client';
import type { LiveDeltaChannel } from '../activities/live-deltas.js';
import { connectTemporal } from '../connection/temporal-connection.js';
import type { ContentStore } from '../content/content-store.js';
import { createTurnpikeDataConverter, turnpikeDataConverter } from '../content/data-converter.js';
import { connectionOptionsFromEnvironment } from '../worker/environment.js';

export interface TurnpikeClientOptions {
  /**
   * The Temporal client. Open its Connection with `connectTemporal` (or give `Connection.connect`
   * `temporalConnectionOptions(options)`): with gRPC's default of
   * 4 MiB, reading a history whose page holds a few large payloads fails with RESOURCE_EXHAUSTED
   * (connection/temporal-connection.ts), and with the SDK's default retries a reader's query that
   * meets another one while the turn has a workflow task in flight waits 1.4–2 s
   * (connection/query-retry.ts).
   */
  client: Client;
  /** Default `turnpike`, or `TURNPIKE_TASK_QUEUE`. */
  taskQueue?: string;
  /**
   * Where images and documents of 128 KiB or more are kept when a turn or message is sent, and
   * where stored tool outputs are read from: the workers' store. Default: the one
   * `TURNPIKE_CONTENT_STORE` names (docs/content-store.md), opened on first use.
   */
  contentStore?: ContentStore;
  /**
   * The live channel the workers push each streamed delta to (`TurnpikePluginOptions.liveDeltas`;
   * `inProcessLiveDeltas` when they run in this process). `turnEvents(id, { live: true })` then
   * shows deltas as the model writes them instead of at the durable stream's pace; without a
   * channel, or when it brings nothing, readers follow the durable stream (docs/streaming.md).
   */
  liveDeltas?: LiveDeltaChannel;
  /**
   * Fairness weights by tenant: a tenant's turns (and their activities and child turns) get this
   * share of a task queue's dispatch against another tenant's 1 (the default), when the queue's
   * fairness is on (docs/tenants-and-capacity.md). From 0.001 to 1,000.
   */
  tenantWeights?: Readonly<Record<string, number>>;
  /**
   * The task queue of the model calls of the turns and conversations this client starts (each
   * turn's `modelTaskQueue`, which its child turns, hand-overs and forks keep): the queue of the
   * workers' `modelCapacity`, whose rate limit holds across the fleet (docs/tenants-and-capacity.md,
   * "Model capacity shared by the fleet"). Default: none (`TurnpikeClient.connect`:
   * `TURNPIKE_MODEL_TASK_QUEUE`), each model call runs on the turn's queue.
   */
  modelTaskQueue?: string;
  /**
   * How long a decision, vote, delegation or client tool result (and the HTTP API's check of who
   * may send it) waits out Temporal failures that pass — no worker answered the turn in time, its
   * workflow task is failing or timing out, the server refused for load or was unavailable — before
   * it raises `TurnpikeUnavailableError` (the API: 503 with `Retry-After`). Default 30,000 ms
   * (client/transient-wait.ts).
   */
  transientPatienceMs?: number;
}

/** What `TurnpikeClient.connect` takes: the options but the Temporal client, which it opens from the environment. */
export type TurnpikeConnectOptions = Omit<TurnpikeClientOptions, 'client'>;

/**
 * The options of a client on the cluster the environment names (`TEMPORAL_ADDRESS`,
 * `TEMPORAL_NAMESPACE`, profiles), with turnpike's data converter over `contentStore` (default:
 * `TURNPIKE_CONTENT_STORE`), on a connection that takes answers as large as Temporal sends
 * (`connectTemporal`).
 */
export async function clientOptionsFromEnvironment(options: TurnpikeConnectOptions = {}): Promise<TurnpikeClientOptions> {
  const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
  const modelTaskQueue = options.modelTaskQueue ?? (process.env.TURNPIKE_MODEL_TASK_QUEUE || undefined);
  const connection = await connectTemporal(connectionOptions as ConnectionOptions);
  const dataConverter = options.contentStore ? createTurnpikeDataConverter({ contentStore: options.contentStore }) : turnpikeDataConverter;
  return {
    client: new Client({ connection, namespace, dataConverter }),
    taskQueue: options.taskQueue,
    ...(options.contentStore ? { contentStore: options.contentStore } : {}),
    ...(options.liveDeltas ? { liveDeltas: options.liveDeltas } : {}),
    ...(options.tenantWeights ? { tenantWeights: options.tenantWeights } : {}),
    // The workers' model queue (`TURNPIKE_MODEL_TASK_QUEUE`, as `runWorker` reads it).
    ...(modelTaskQueue !== undefined ? { modelTaskQueue } : {}),
  };
}
