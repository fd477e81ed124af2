/** Runs one server tool call. A thrown error fails the activity, so the tool's retry policy applies. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { recordToolAttempt } from './telemetry.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ExecuteToolInput, ExecuteToolResult } from '../workflows/types/index.js';

export async function executeTool(registry: ToolRegistry, request: ExecuteToolInput): Promise<ExecuteToolResult> {
  const tool = registry.get(request.toolName);
  if (!tool || tool.kind !== 'server') {
    throw ApplicationFailure.nonRetryable(`No server tool "${request.toolName}" is registered on this worker`, 'UnknownTool');
  }
  // Validated again here: an approver's edit passed the JSON Schema check in the workflow,
  // but only zod knows the schema's refinements and transforms.
  const parsed = tool.inputSchema.safeParse(request.input);
  if (!parsed.success) {
    return { output: `Invalid input for tool "${tool.name}":\n${z.prettifyError(parsed.error)}`, isError: true };
  }
  const context = Context.current();
  let output: unknown;
  try {
    output = await tool.execute(parsed.data, {
      toolCallId: request.toolCallId,
      idempotencyKey: request.idempotencyKey,
      abortSignal: context.cancellationSignal,
      heartbeat: (details) => context.heartbeat(details),
    });
  } catch (error) {
    // A thrown error fails this attempt; the tool's retry policy decides whether another follows.
    recordToolAttempt(context, tool.name, request.toolCallId, 'failed');
    throw error;
  }
  if (tool.outputSchema) {
    const checked = tool.outputSchema.safeParse(output);
    if (!checked.success) {
      recordToolAttempt(context, tool.name, request.toolCallId, 'error');
      return { output: `Tool "${tool.name}" returned output that fails its output schema:\n${z.prettifyError(checked.error)}`, isError: true };
    }
    output = checked.data;
  }
  recordToolAttempt(context, tool.name, request.toolCallId, 'ok');
  return { output: output ?? null, isError: false };
}
