/**
 * Reads a workflow's history page by page, raw, through any client: also one whose connection
 * takes less than Temporal sends.
 *
 * The server fills a page with as many events as its page size allows, whatever their bytes:
 * five signals of 1.1 MB make a 5.5 MB page, and a connection with gRPC's default receive limit
 * (4 MiB) refuses it with RESOURCE_EXHAUSTED. Turnpike's own connections take 128 MiB
 * (connection/temporal-connection.ts), but `sweepContent` is given the application's client. So a
 * page refused that way is asked again, from the same token, one event at a time, then with
 * twice as many events while pages fit, never again as many as a refused one. The server does
 * not split the events it wrote together (signals that arrived during one workflow task are
 * written in one batch with its completion), so what cannot be read is such a batch, or a single
 * event, larger than the connection takes.
 *
 * The SDK's gRPC retry (its default interceptor) retries RESOURCE_EXHAUSTED with backoff before
 * the error reaches here: about 40 s for each refused page. A connection from `connectTemporal`
 * does not meet it.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { RECEIVE_LIMIT_ARG, receiveLimitOf } from '../connection/temporal-connection.js';

const RESOURCE_EXHAUSTED = 8;
/** Page sizes after a refusal grow to at most this; the server's own default page size is in this range. */
const MAX_SMALL_PAGE = 256;

export function isResourceExhausted(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === RESOURCE_EXHAUSTED;
}

/** Calls `onPage` with each page of the run's history, in order; throws what the server or connection refused (other than a page too large for it). */
export async function readHistoryPages(
  client: Client,
  execution: { workflowId: string; runId: string },
  onPage: (history: temporal.api.history.v1.IHistory | null | undefined) => Promise<void>,
): Promise<void> {
  const namespace = client.options.namespace;
  let nextPageToken: Uint8Array | undefined;
  /** Events a page; 0 is the server's page size. */
  let pageSize = 0;
  /** The fewest events a page had that the connection refused. */
  let refusedAt = Infinity;
  for (;;) {
    let page: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse;
    try {
      page = await client.workflowService.getWorkflowExecutionHistory({ namespace, execution, nextPageToken, skipArchival: true, maximumPageSize: pageSize });
    } catch (error) {
      if (!isResourceExhausted(error)) throw error;
      if (pageSize === 1) {
        const limit = receiveLimitOf(client.connection);
        throw new Error(
          `its smallest page (one event, with those written together with it) is larger than the client's connection takes${limit !== undefined ? ` (${limit} bytes; ${RECEIVE_LIMIT_ARG} in its channelArgs)` : ''}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      if (pageSize > 0) refusedAt = pageSize;
      pageSize = pageSize === 0 ? 1 : Math.max(1, Math.floor(pageSize / 2));
      continue;
    }
    await onPage(page.history);
    if (pageSize > 0) pageSize = Math.min(pageSize * 2, refusedAt - 1, MAX_SMALL_PAGE);
    if (!page.nextPageToken?.length) return;
    nextPageToken = page.nextPageToken;
  }
}
