/**
 * The recorded turns the evaluation figure evaluates: N scripted turns of a fixed mix, run to
 * their end on the turns' task queue, approvals decided through the approval update as a person
 * would. By turn index mod 10:
 *   0–3  one `bench_tool` call, then the answer (2 steps)
 *   4    two `bench_tool` calls in two steps, then the answer (3 steps)
 *   5–6  one `bench_approval` call, approved (parks, then 2 steps)
 *   7    one `bench_approval` call, denied (parks; the model answers the denial)
 *   8    a plain answer (1 step)
 *   9    a typed answer (`output` with a JSON schema; 1 step)
 * `expectedTotals` is what an evaluation with a change the scripted model ignores (a system
 * prompt) must report for them: every call the same, answered from its record.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { AGENT_TURN_WORKFLOW, approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { EvaluationTotals } from '../../workflows/evaluation/evaluation-types.js';
import type { AgentTurnInput, AgentTurnResult } from '../../workflows/types/index.js';
import { BENCH_APPROVAL_TOOL, BENCH_TOOL } from '../bench-tools.js';
import { runPool, sleep } from '../pool.js';
import { SCRIPTED_MODEL } from '../turnpike-system.js';

export type TurnKind = 'tool' | 'two-tools' | 'approved' | 'denied' | 'text' | 'typed';

const KINDS: readonly TurnKind[] = ['tool', 'tool', 'tool', 'tool', 'two-tools', 'approved', 'approved', 'denied', 'text', 'typed'];

export const kindOf = (index: number): TurnKind => KINDS[index % KINDS.length];

const TYPED_OUTPUT: NonNullable<AgentTurnInput['output']> = {
  schema: { type: 'object', properties: { refund: { type: 'number' }, reason: { type: 'string' } }, required: ['refund', 'reason'] },
};

function promptOf(index: number): Pick<AgentTurnInput, 'messages' | 'output'> {
  const user = (content: string) => [{ role: 'user' as const, content }];
  switch (kindOf(index)) {
    case 'tool':
      return { messages: user(`use ${BENCH_TOOL} with {"i":${index}}`) };
    case 'two-tools':
      return { messages: user(`use ${BENCH_TOOL} with {"i":${index}} then use ${BENCH_TOOL} with {"i":${index + 1}}`) };
    case 'approved':
    case 'denied':
      return { messages: user(`use ${BENCH_APPROVAL_TOOL} with {"i":${index}}`) };
    case 'text':
      return { messages: user(`hello ${index}`) };
    case 'typed':
      return { messages: user(`answer with {"refund":${index},"reason":"late"}`), output: TYPED_OUTPUT };
  }
}

export interface RecordedTurns {
  turnIds: string[];
  seconds: number;
  /** Turns by kind. */
  kinds: Record<TurnKind, number>;
}

/** Concurrent recorders: each starts a turn, decides its approval if it has one, and waits for its end. */
const RECORD_CONCURRENCY = 50;

async function decide(client: Client, turnId: string, approved: boolean): Promise<void> {
  const handle = client.workflow.getHandle(turnId);
  for (let waited = 0; ; waited += 100) {
    const pending = await handle.query(turnStateQuery).then((state) => state.pending[0], () => undefined);
    if (pending?.approvalId) {
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId, approved, approver: 'bench', ...(approved ? {} : { reason: 'no' }) }] });
      return;
    }
    if (waited > 120_000) throw new Error(`turn ${turnId} never parked`);
    await sleep(100);
  }
}

/** Records `count` turns on `taskQueue` and checks each ended as scripted. */
export async function recordTurns(client: Client, taskQueue: string, count: number, runId: string, log: (line: string) => void): Promise<RecordedTurns> {
  const started = performance.now();
  const kinds = { tool: 0, 'two-tools': 0, approved: 0, denied: 0, text: 0, typed: 0 } satisfies Record<TurnKind, number>;
  let ended = 0;
  const turnIds = await runPool(count, RECORD_CONCURRENCY, async (index) => {
    const kind = kindOf(index);
    const turnId = `bench-eval-${runId}-${index}`;
    const handle = await client.workflow.start(AGENT_TURN_WORKFLOW, { taskQueue, workflowId: turnId, args: [{ model: { ...SCRIPTED_MODEL }, ...promptOf(index) } satisfies AgentTurnInput] });
    if (kind === 'approved' || kind === 'denied') await decide(client, turnId, kind === 'approved');
    const result = (await handle.result()) as AgentTurnResult;
    if (result.status !== 'completed') throw new Error(`recorded turn ${turnId} (${kind}) ended ${result.status}`);
    kinds[kind]++;
    if (++ended % 200 === 0) log(`  eval: ${ended} of ${count} turns recorded (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    return turnId;
  });
  return { turnIds, seconds: (performance.now() - started) / 1000, kinds };
}

/** Tool runs the recorded turns must have caused: one per executed or approved call. */
export function expectedToolRuns(kinds: Record<TurnKind, number>): Record<string, number> {
  return { [BENCH_TOOL]: kinds.tool + 2 * kinds['two-tools'], [BENCH_APPROVAL_TOOL]: kinds.approved };
}

/** What an evaluation whose change the scripted model ignores must report for these turns. */
export function expectedTotals(kinds: Record<TurnKind, number>): Omit<EvaluationTotals, 'original' | 'evaluated'> & { original: { approvalsAsked: number; denials: number } } {
  const calls = kinds.tool + 2 * kinds['two-tools'] + kinds.approved + kinds.denied;
  return {
    turns: Object.values(kinds).reduce((sum, value) => sum + value, 0),
    errors: 0,
    textChanged: 0,
    outputInvalid: 0,
    toolCalls: { same: calls, differentInput: 0, new: 0, missing: 0 },
    // Every executed or approved call answered from its record; the denied one by its recorded decision.
    replayed: kinds.tool + 2 * kinds['two-tools'] + kinds.approved,
    ranSafe: 0,
    notRun: 0,
    wouldAsk: 0,
    denials: kinds.denied,
    original: { approvalsAsked: kinds.approved + kinds.denied, denials: kinds.denied },
  };
}
