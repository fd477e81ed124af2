/**
 * The gRPC retries of every Connection turnpike opens: the SDK's own, except that a query the
 * server refused because the workflow's query buffer was full is asked again within tens of
 * milliseconds instead of after 1.4–2 s.
 *
 * Why: the Temporal server answers a query of a workflow that has a workflow task in flight (or
 * none completed yet) only after that task completes, holding the query in a buffer of
 * `history.MaxBufferedQueryCount` queries per workflow, 1 by default. A second query in that
 * window is refused at once with RESOURCE_EXHAUSTED, "consistent query buffer is full"
 * (temporalio/temporal v1.29.1, service/history/api/queryworkflow/api.go and
 * common/dynamicconfig/constants.go). The TypeScript client's default retry interceptor retries
 * RESOURCE_EXHAUSTED after `1.7 ^ attempt × 1 s` (±20 %), from attempt 1 (@temporalio/client
 * 1.24.0, lib/grpc-retry.js), so the refused query came back 1.4–2 s later, although the task
 * it waited for completes in milliseconds. A streaming turn has a task in flight for much of its
 * life (a signal about every 200 ms, and its first task as it starts), so two readers of it —
 * two API processes, or two clients in one — often met there, and the second one's first events
 * came 1.4–2 s late (docs/streaming.md, "the query stall").
 */
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions, type GrpcRetryOptions } from '@temporalio/client';

/** A gRPC status, as the SDK's retry options see it. */
type Status = Parameters<GrpcRetryOptions['delayFunction']>[1];
/** A gRPC interceptor, as a Connection takes it. */
type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** gRPC RESOURCE_EXHAUSTED. */
const RESOURCE_EXHAUSTED = 8;

/** The first wait after a query refused for a full buffer: about 34 ms (1.7 × 20 ms), then 1.7 times longer each time. */
export const FULL_QUERY_BUFFER_INITIAL_INTERVAL_MS = 20;

/** True for the server's refusal of a query because the workflow's query buffer was full. */
export function isFullQueryBuffer(status: Pick<Status, 'code' | 'details'>): boolean {
  return status.code === RESOURCE_EXHAUSTED && /consistent query buffer is full/i.test(status.details ?? '');
}

/** The SDK's default retry options, but a query refused for a full buffer is asked again at once. */
export function turnpikeGrpcRetryOptions(): GrpcRetryOptions {
  return defaultGrpcRetryOptions({
    // The SDK's own defaults for every other status: 1 s for RESOURCE_EXHAUSTED, else 100 ms.
    initialIntervalMs: (status) =>
      isFullQueryBuffer(status) ? FULL_QUERY_BUFFER_INITIAL_INTERVAL_MS : status.code === RESOURCE_EXHAUSTED ? 1_000 : 100,
  });
}

/** The retry interceptor of a Connection turnpike opens (`connectTemporal`, `temporalConnectionOptions`). */
export function turnpikeGrpcRetryInterceptor(): Interceptor {
  return makeGrpcRetryInterceptor(turnpikeGrpcRetryOptions());
}
