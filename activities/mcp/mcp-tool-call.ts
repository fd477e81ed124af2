/**
 * One call of an MCP server's tool, in the `executeTool` activity: on a connection of the tool's
 * pool, heartbeating, answering the server's questions through the turn, and what the model gets back.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ErrorCode, McpError, type CallToolResult, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ExecuteToolInput, ExecuteToolResult } from '../../workflows/types/index.js';
import { askTheTurn } from './mcp-elicitation.js';
import type { CallEnd } from './mcp-connection-pool.js';
import { MCP_IDEMPOTENCY_KEY_META } from './mcp-servers.js';
import type { ResolvedTool } from './mcp-tool-specs.js';

/**
 * The call itself, once its tool is resolved: the idempotency key in `_meta`; the activity's
 * cancellation aborts the request, which the MCP client turns into `notifications/cancelled`;
 * each progress notification becomes a heartbeat (which is also how the cancellation reaches
 * this activity).
 */
export async function callMcpTool(resolved: ResolvedTool, request: ExecuteToolInput): Promise<ExecuteToolResult> {
  const context = Context.current();
  // Heartbeats also while the server sends no progress: a cancellation reaches an activity only
  // through a heartbeat, and a worker that died is noticed by the missing ones.
  const every = Math.max(200, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 15_000) / 3));
  let lastProgress: { progress: number; total?: number; message?: string } | undefined;
  const keepAlive = setInterval(() => context.heartbeat(lastProgress), every);
  let result: CallToolResult;
  try {
    const ask = (params: ElicitRequest['params'], signal: AbortSignal) => askTheTurn(context, request, params, signal);
    result = await resolved.pool.with(
      async (connection) => {
        // The connection is this call's alone until it returns: the server's questions on it are this call's.
        connection.asker = ask;
        try {
          return await connection.callTool(
            resolved.tool.name,
            (request.input ?? {}) as Record<string, unknown>,
            { [MCP_IDEMPOTENCY_KEY_META]: request.idempotencyKey },
            {
              signal: context.cancellationSignal,
              onprogress: ({ progress, total, message }) => {
                lastProgress = { progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) };
                context.heartbeat(lastProgress);
              },
              // Temporal's timeouts govern the call; the MCP client's own must not end it sooner.
              timeout: context.info.startToCloseTimeoutMs,
              resetTimeoutOnProgress: true,
            },
          );
        } finally {
          connection.asker = undefined;
        }
      },
      (outcome) => callEnd(outcome, context.cancellationSignal),
      context.cancellationSignal,
    );
  } catch (error) {
    if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason instanceof CancelledFailure ? context.cancellationSignal.reason : new CancelledFailure('cancelled');
    // The server refused the call itself (unknown tool, bad arguments, a result that fails the
    // tool's output schema): the model is told and may correct itself; retrying would not help.
    if (error instanceof McpError && [ErrorCode.InvalidParams, ErrorCode.InvalidRequest, ErrorCode.MethodNotFound].includes(error.code)) {
      return { output: `Tool "${request.toolName}" failed: ${error.message}`, isError: true };
    }
    // Anything else (the connection dropped, the server crashed) fails this attempt; the
    // tool's retry policy decides whether another follows, on a fresh connection if need be.
    throw ApplicationFailure.retryable(`MCP call to "${request.toolName}" failed: ${messageOf(error)}`, 'McpCallFailed');
  } finally {
    clearInterval(keepAlive);
  }
  return { output: outputOf(result), isError: result.isError === true };
}

/**
 * Whether a call's connection may serve the next call. Not after a cancelled call or one that
 * timed out: the server may still be working on it, and a question it asked then would reach
 * whichever call held the connection next. Nor after a lost connection.
 */
export function callEnd(outcome: { ok: true } | { ok: false; error: unknown }, cancellation: AbortSignal): CallEnd {
  if (cancellation.aborted) return 'retire';
  if (outcome.ok) return 'reusable';
  const { error } = outcome;
  // The server answered with an error: the connection is fine.
  return error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed ? 'reusable' : 'retire';
}

/**
 * What the model gets back: the structured result when the tool declares one (already checked
 * against its output schema by the MCP client), else the text of a text-only result, else the
 * content blocks as MCP returned them.
 */
export function outputOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && result.isError !== true) return result.structuredContent;
  const content = result.content ?? [];
  if (content.every((block) => block.type === 'text')) return content.map((block) => (block as { text: string }).text).join('\n');
  return content;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
