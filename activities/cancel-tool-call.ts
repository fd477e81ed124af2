/**
 * `cancelToolCall`: a turn cancelled while a call of a `cancellable` tool ran asks the tool to undo
 * what the call started outside the worker (workflows/calls/cancellable-calls.ts). The tool's
 * `cancel` says what it did; a tool that has none, or that this worker does not register, is told
 * so in the result, which the turn only records.
 */
import type { ToolRegistry } from './tool-registry.js';
import type { CancelToolCallInput } from '../workflows/types/index.js';

export async function cancelToolCall(registry: ToolRegistry, request: CancelToolCallInput): Promise<string> {
  const tool = registry.get(request.toolName);
  if (!tool || tool.kind !== 'server' || typeof tool.cancel !== 'function') {
    return `No server tool "${request.toolName}" with a cancel is registered on this worker; nothing was cancelled.`;
  }
  const parsed = tool.inputSchema.safeParse(request.input);
  // The call ran with this input: one that fails the schema now never ran its tool, so nothing started.
  if (!parsed.success) return `The input of tool "${tool.name}" is not valid, so the call never ran it; nothing was cancelled.`;
  return tool.cancel(parsed.data, { toolCallId: request.toolCallId, idempotencyKey: request.idempotencyKey, startedAtMs: request.startedAtMs });
}
