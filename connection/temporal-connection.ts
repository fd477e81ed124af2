/**
 * Every `Connection` turnpike opens to Temporal (the CLI, the HTTP API, `TurnpikeClient.connect`,
 * `npm start`) comes from here, so each takes answers as large as Temporal sends.
 *
 * gRPC refuses an answer over its receive limit (4 MiB unless set) with RESOURCE_EXHAUSTED
 * ("Received message larger than max"). Temporal allows 2 MiB a payload and returns a history in
 * pages of many events, so a workflow with a few large signals has history pages over 4 MiB. The
 * Go SDK, and the Temporal CLI built on it, set 128 MiB (`defaultMaxPayloadSize`), and so does
 * the Core SDK under a worker's `NativeConnection` (`TEMPORAL_MAX_INCOMING_GRPC_BYTES`). The
 * TypeScript SDK's `Connection` means to (`max_receive_message_length: 128 MiB` in its defaults)
 * but without the `grpc.` prefix, which grpc-js ignores, so it keeps 4 MiB. A Connection made
 * here sets the key grpc-js reads.
 *
 * Each also asks a query refused for a full query buffer again within tens of milliseconds, not
 * the SDK's 1.4–2 s (query-retry.ts: the first read of a busy turn).
 *
 * An application that passes `TurnpikeClient` a Client over a Connection of its own should open
 * it the same way: `connectTemporal(options)`, or `Connection.connect(temporalConnectionOptions(options))`.
 */
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { turnpikeGrpcRetryInterceptor } from './query-retry.js';

/** The gRPC channel argument grpc-js reads for the largest answer it accepts. */
export const RECEIVE_LIMIT_ARG = 'grpc.max_receive_message_length';

/** 128 MiB: the receive limit of the Go SDK and the Temporal CLI. */
export const TEMPORAL_RECEIVE_LIMIT_BYTES = 128 * 1024 * 1024;

/** gRPC's receive limit when none is set. */
export const GRPC_DEFAULT_RECEIVE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * `options` with the receive limit of Temporal's own clients, unless they set one, and, unless
 * they set `interceptors`, the SDK's retries with a query refused for a full query buffer asked
 * again at once (query-retry.ts).
 */
export function temporalConnectionOptions(options: ConnectionOptions = {}): ConnectionOptions {
  const channelArgs = options.channelArgs ?? {};
  const interceptors = options.interceptors ?? [turnpikeGrpcRetryInterceptor()];
  if (channelArgs[RECEIVE_LIMIT_ARG] !== undefined) return { ...options, interceptors };
  return { ...options, interceptors, channelArgs: { ...channelArgs, [RECEIVE_LIMIT_ARG]: TEMPORAL_RECEIVE_LIMIT_BYTES } };
}

/** `Connection.connect` with the receive limit of Temporal's own clients (unless `options` set one). */
export function connectTemporal(options: ConnectionOptions = {}): Promise<Connection> {
  return Connection.connect(temporalConnectionOptions(options));
}

/** The largest answer a `Connection` accepts by its options (gRPC's 4 MiB when they set none); undefined for another kind of connection. */
export function receiveLimitOf(connection: unknown): number | undefined {
  const channelArgs = (connection as { options?: { channelArgs?: Record<string, unknown> } } | undefined)?.options?.channelArgs;
  if (!channelArgs) return undefined;
  const limit = channelArgs[RECEIVE_LIMIT_ARG];
  return typeof limit === 'number' ? (limit < 0 ? Infinity : limit) : GRPC_DEFAULT_RECEIVE_LIMIT_BYTES;
}
