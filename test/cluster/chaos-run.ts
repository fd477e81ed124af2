/**
 * One run of the cluster chaos (the plan's form, see chaos-plan.ts): the turns start, each
 * carrying a 300 KB document by reference in the cluster's PostgreSQL; all park; an approver that
 * knows only what visibility lists decides every call by update; meanwhile the plan's events
 * (chaos-events.ts) fire as charge attempts pass their marks. Resolves with everything the test
 * asserts on and reports; asserts nothing itself but that the turns park and finish in time.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { approveToolCallUpdate, contentRef, storeContent, turnStateQuery, type agentTurn, type AgentTurnResult, type DocumentPart, type PostgresContentStore } from '../../client/index.js';
import type { Cluster } from '../../scripts/temporal-cluster.js';
import { describeEvent, fire, type ChargeAttempt, type EventReport } from './chaos-events.js';
import { isDenied, type ChaosPlan } from './chaos-plan.js';
import { diagnose, eventually, listIds, sleep, startTurn, TASK_QUEUE } from './cluster-support.js';

export const CHAOS_TURN_PREFIX = 'cluster-turn-';
export const PARKED_QUERY = `AgentTurnStatus="awaiting-input" AND TaskQueue="${TASK_QUEUE}"`;

export interface ChaosRun {
  ids: string[];
  results: AgentTurnResult[];
  document: { key: string; bytes: Buffer };
  /** Decisions whose update returned (or was found already made on a retry). */
  decisionsConfirmed: number;
  /** Update calls that failed and were sent again (their turn listed again later). */
  updateRetries: number;
  listings: number;
  failedListings: number;
  attempts: ChargeAttempt[];
  /** Idempotency keys that took effect (the charge's files). */
  effects: string[];
  events: EventReport[];
  phases: string[];
  seconds: number;
}

export interface ChaosSetup {
  plan: ChaosPlan;
  cluster: Cluster;
  client: Client;
  contentStore: PostgresContentStore;
  records: string;
}

const ours = (key: string) => key.startsWith(CHAOS_TURN_PREFIX);

function readAttempts(records: string): ChargeAttempt[] {
  try {
    return readFileSync(path.join(records, 'attempts.log'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ChargeAttempt)
      .filter((attempt) => ours(attempt.key));
  } catch {
    return [];
  }
}

export async function runChaos({ plan, cluster, client, contentStore, records }: ChaosSetup): Promise<ChaosRun> {
  const began = Date.now();
  const phases: string[] = [];
  const mark = (what: string) => {
    phases.push(`${what} at ${((Date.now() - began) / 1000).toFixed(0)}s`);
    console.log(`cluster chaos (${plan.form}): ${phases.at(-1)}`);
  };
  const ids = Array.from({ length: plan.turns }, (_, index) => `${CHAOS_TURN_PREFIX}${index}`);
  const indexOf = new Map(ids.map((id, index) => [id, index]));
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(300 * 1024)]);
  const key = await storeContent(contentStore, pdf);
  const document: DocumentPart = { type: 'document', source: { type: 'stored', ref: contentRef(key), mediaType: 'application/pdf', bytes: pdf.length } };
  // Two approval-gated charges per turn, one step after the other: every turn parks twice.
  const handles: Array<WorkflowHandle<typeof agentTurn>> = [];
  for (let offset = 0; offset < ids.length; offset += 100) {
    handles.push(
      ...(await Promise.all(
        ids.slice(offset, offset + 100).map((id, slot) => {
          const index = offset + slot;
          return startTurn(client, id, `use charge_card with {"amount": ${index + 1}} then use charge_card with {"amount": ${index + 1001}}`, { conversationId: `cluster-conversation-${index % 10}` }, document);
        }),
      )),
    );
  }
  await eventually('all turns parked in visibility', () => client.workflow.count(PARKED_QUERY), ({ count }) => count === plan.turns, plan.parkTimeoutMs).catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await diagnose(client, ids, PARKED_QUERY)}`);
  });
  mark(`${plan.turns} parked`);

  // The approver knows nothing but what visibility lists; each decision is an update.
  const decided = new Set<string>();
  let listings = 0;
  let failedListings = 0;
  let updateRetries = 0;
  let approving = true;
  const decide = async (workflowId: string) => {
    const handle = client.workflow.getHandle<typeof agentTurn>(workflowId);
    // Queries and updates wait for a worker; while none answers (restarts), retry next round.
    const state = await client.withDeadline(Date.now() + 5_000, () => handle.query(turnStateQuery)).catch(() => undefined);
    for (const call of state?.pending ?? []) {
      if (!call.approvalId || decided.has(call.approvalId)) continue;
      const amount = (call.input as { amount: number }).amount;
      const approved = !isDenied(indexOf.get(workflowId)!, amount > 1000, plan.denyEvery);
      await client
        .withDeadline(Date.now() + 10_000, () =>
          handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: call.approvalId!, approved, approver: 'cluster-test', ...(approved ? {} : { reason: 'over budget' }) }] }),
        )
        .then(
          () => decided.add(call.approvalId!),
          (error: unknown) => {
            updateRetries++;
            // An update accepted just before a restart may have lost its reply: the retry then
            // learns the decision is already made.
            if (/ApprovalAlreadyDecided|already decided/i.test(String((error as { cause?: unknown }).cause ?? error))) decided.add(call.approvalId!);
          },
        );
    }
  };
  const approver = (async () => {
    while (approving) {
      // While the server restarts, a listing fails; the next round lists again.
      const listed = await listIds(client, PARKED_QUERY).catch(() => {
        failedListings++;
        return [] as string[];
      });
      listings++;
      // At most 20 turns at a time: the queries replay evicted turns on the workers.
      for (let offset = 0; offset < listed.length && approving; offset += 20) await Promise.all(listed.slice(offset, offset + 20).map(decide));
      await sleep(250);
    }
  })();

  const attempts = () => readAttempts(records);
  const events: EventReport[] = [];
  const target = { cluster, client, probeWorkflowId: ids[0]!, visibilityQuery: PARKED_QUERY, attempts, began };
  const chaos = (async () => {
    for (const event of plan.events) {
      await eventually(`${event.afterAttempts} charge attempts`, async () => attempts().length, (seen) => seen >= event.afterAttempts, plan.finishTimeoutMs);
      const report = await fire(event, target);
      events.push(report);
      mark(describeEvent(report));
    }
  })();

  // Results, 50 long polls at a time, each read again while the client reconnects.
  const deadline = began + plan.finishTimeoutMs;
  const resultOf = async (handle: WorkflowHandle<typeof agentTurn>): Promise<AgentTurnResult> => {
    for (;;) {
      try {
        return await handle.result();
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(1_000);
      }
    }
  };
  const results: AgentTurnResult[] = new Array(plan.turns);
  let next = 0;
  const collect = Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < handles.length) {
        const index = next++;
        results[index] = await resultOf(handles[index]!);
      }
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`turns did not finish within ${plan.finishTimeoutMs / 60_000} minutes; ${decided.size} decisions, ${attempts().length} charge attempts, ${events.length} of ${plan.events.length} events`)),
      deadline - Date.now(),
    );
  });
  try {
    await Promise.race([Promise.all([collect, chaos]), timeout]);
  } finally {
    clearTimeout(timer);
    approving = false;
    await approver;
  }
  mark('all results');

  const effects = readdirSync(path.join(records, 'effects')).map(decodeURIComponent).filter(ours).sort();
  return {
    ids,
    results,
    document: { key, bytes: pdf },
    decisionsConfirmed: decided.size,
    updateRetries,
    listings,
    failedListings,
    attempts: attempts(),
    effects,
    events,
    phases,
    seconds: (Date.now() - began) / 1000,
  };
}
