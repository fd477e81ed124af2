/**
 * What an evaluation turn's tool calls are answered with (docs/evaluations.md): the original
 * turn's recorded results and decisions, matched by tool name and input hash. The evaluation
 * worker wraps two activities with it: the model step, whose dispositions are rewritten so that
 * no call parks (`evaluationDisposition`), and `executeTool`, which answers from the record and
 * runs only tools marked safe (`evaluationToolResult`).
 *
 * An evaluation turn knows its original by its memo (`turnpike.evaluationOf`), read once per
 * turn through the worker's client and kept, with the original's records, in a bounded cache. A
 * workflow with no such memo (an agent tool's child turn, a turn started on the queue by hand)
 * has no records: nothing it calls matches, so only safe tools run.
 */
import type { Client } from '@temporalio/client';
import { callKey } from '../../workflows/evaluation/compare-turns.js';
import { EVALUATION_OF_MEMO_KEY, NOT_RUN_PREFIX, WOULD_ASK_REASON } from '../../workflows/evaluation/evaluation-types.js';
import type { AgentTurnResult, ExecuteToolResult, ToolCallDisposition } from '../../workflows/types/index.js';

/** An original turn's records, by `callKey`. */
export interface RecordedCalls {
  results: Map<string, ExecuteToolResult>;
  decisions: Map<string, { approved: boolean; reason?: string; editedInput?: unknown }>;
}

export const NO_RECORDS: RecordedCalls = { results: new Map(), decisions: new Map() };

/** The records of a turn's result: each call's result (the first, for calls repeated with the same input) and decision. */
export function recordedCallsOf(result: AgentTurnResult): RecordedCalls {
  const results = new Map<string, ExecuteToolResult>();
  for (const call of result.toolCalls) {
    if (call.executedBy === 'provider' || !['executed', 'approved', 'client', 'error'].includes(call.outcome)) continue;
    const key = callKey(call.toolName, call.input);
    if (!results.has(key)) results.set(key, { output: call.output, isError: call.isError });
  }
  const decisions: RecordedCalls['decisions'] = new Map();
  for (const decision of result.decisions ?? []) {
    if (decision.outcome !== 'approved' && decision.outcome !== 'denied' && decision.outcome !== 'expired') continue;
    const key = `${decision.toolName}\u0000${decision.inputHash}`;
    if (decisions.has(key)) continue;
    decisions.set(key, {
      approved: decision.approved,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      ...(decision.editedInput !== undefined ? { editedInput: decision.editedInput } : {}),
    });
  }
  return { results, decisions };
}

/**
 * A call's disposition in an evaluation turn, from the worker's own: nothing parks. A call that
 * would ask a person gets the original's recorded decision, or is denied as "would ask a person";
 * a client tool's call is run as a server call, so `evaluationToolResult` answers it from the record.
 */
export function evaluationDisposition(disposition: ToolCallDisposition, toolName: string, recorded: RecordedCalls): ToolCallDisposition {
  switch (disposition.kind) {
    case 'needs-approval': {
      const decision = recorded.decisions.get(callKey(toolName, disposition.input));
      if (!decision) return { kind: 'decided', input: disposition.input, approved: false, reason: WOULD_ASK_REASON };
      return {
        kind: 'decided',
        input: decision.editedInput ?? disposition.input,
        approved: decision.approved,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      };
    }
    case 'client':
      return { kind: 'execute', input: disposition.input };
    default:
      return disposition;
  }
}

/** A call's result in an evaluation turn: the recorded one, else the tool run if it is safe, else a result that says it was not run. */
export async function evaluationToolResult(
  request: { toolName: string; input: unknown },
  recorded: RecordedCalls,
  safe: ReadonlySet<string>,
  run: () => Promise<ExecuteToolResult>,
): Promise<ExecuteToolResult> {
  const hit = recorded.results.get(callKey(request.toolName, request.input));
  if (hit) return hit;
  if (safe.has(request.toolName)) return run();
  return { output: `${NOT_RUN_PREFIX}: "${request.toolName}" has no recorded result for this input and is not marked safe to run in evaluation`, isError: true };
}

/** How many turns' records a worker keeps. */
const CACHED_TURNS = 500;

/** The records of the originals of evaluation turns, by evaluation turn id, read once each. */
export class RecordedCallsCache {
  private readonly turns = new Map<string, Promise<RecordedCalls>>();

  async of(client: Client, workflowId: string): Promise<RecordedCalls> {
    let found = this.turns.get(workflowId);
    if (!found) {
      found = readRecords(client, workflowId);
      this.turns.set(workflowId, found);
      // A failed read is tried again by the activity's next attempt.
      found.catch(() => this.turns.delete(workflowId));
      if (this.turns.size > CACHED_TURNS) this.turns.delete(this.turns.keys().next().value!);
    }
    return found;
  }
}

async function readRecords(client: Client, workflowId: string): Promise<RecordedCalls> {
  const described = await client.workflow.getHandle(workflowId).describe();
  const evaluationOf = described.memo?.[EVALUATION_OF_MEMO_KEY] as { turnId?: unknown } | undefined;
  if (typeof evaluationOf?.turnId !== 'string') return NO_RECORDS;
  return recordedCallsOf((await client.workflow.getHandle(evaluationOf.turnId).result()) as AgentTurnResult);
}
