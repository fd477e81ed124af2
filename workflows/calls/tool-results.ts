/** How a settled tool call reads to the model and to the caller. Pure helpers. */
import type { ApprovalRecord, ToolCallOutcome, ToolCallPart, ToolCallRecord, ToolResultPart, Usage } from '../types/index.js';

export interface Settlement {
  outcome: ToolCallOutcome;
  output: unknown;
  isError: boolean;
  approval?: ApprovalRecord;
  /** The input the call ran with, when an approver edited it. */
  input?: unknown;
  /** An agent tool's call: its child turn's usage. */
  usage?: Usage;
}

export function errorSettlement(outcome: ToolCallOutcome, message: string, approval?: ApprovalRecord): Settlement {
  return { outcome, output: message, isError: true, ...(approval ? { approval } : {}) };
}

export function toResultPart(call: ToolCallPart, settlement: Settlement): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: settlement.output,
    ...(settlement.isError ? { isError: true } : {}),
  };
}

export function toRecord(call: ToolCallPart, settlement: Settlement, validatedInput: unknown): ToolCallRecord {
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input: settlement.input ?? validatedInput ?? call.input,
    outcome: settlement.outcome,
    output: settlement.output,
    isError: settlement.isError,
    ...(settlement.approval ? { approval: settlement.approval } : {}),
    ...(settlement.usage ? { usage: settlement.usage } : {}),
  };
}

export function deniedMessage(toolName: string, reason: string | undefined): string {
  return `The call to "${toolName}" was denied${reason ? `: ${reason}` : '.'} The tool did not run.`;
}
