/**
 * Decisions on the cluster through both API processes: an approver's first page of parked calls
 * (`GET /api/approvals`, rights-filtered), then legitimate decisions at a steady rate alternating
 * between the processes, each timed from the request to the tool's effect (its `ranAt`, written
 * by the worker that ran it), with hostile decisions spread over the same window: another's
 * call, a stale input hash, unknown approval and turn ids. None may be accepted; the calls they
 * aimed at must stay parked.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { AgentTurnResult } from '../../client/index.js';
import { actionsOf, activityRetriesOf } from '../history-actions.js';
import { runPool, sleep } from '../pool.js';
import { percentile, round } from '../stats.js';
import type { ApiProcess } from './topology.js';

const LISTING_ROUNDS = 5;
export const HOSTILE_KINDS = ['no-rights', 'other-approver', 'stale-input-hash', 'unknown-approval', 'unknown-turn'] as const;

interface ListedCall {
  turnWorkflowId: string;
  approvalId: string;
  inputHash: string;
  toolName: string;
}

export interface ListingFigures {
  /** Calls each identity's first page listed (the API reads at most 5,000 turns per listing, api/parked-listing.ts). */
  listedByApprover: Record<string, number>;
  /** Each identity's first page, p50 over the rounds (ms). */
  p50MsByApprover: Record<string, number>;
  p50Ms: number;
  maxMs: number;
  rounds: number;
}

export interface DecisionFigures {
  decisions: number;
  ratePerSecond: number;
  windowSeconds: number;
  /** Request → the tool's effect (ms), and request → the API's answer. */
  toEffect: { p50: number; p99: number; max: number };
  answered: { p50: number; p99: number };
  refused: number;
  hostile: { sent: number; accepted: number; byKind: Record<string, Record<string, number>> };
  /** Every hostile decision's target still parked afterwards, and no accepted decision's (visibility). */
  untouchedStillParked: boolean;
  /**
   * From a sample of decided turns' whole histories (parked, decided, the tool run, the answer):
   * events, actions and activity retries per decided turn. What a decision adds is this less the
   * parked turn's figures.
   */
  decidedTurn: { sample: number; events: number; actions: number; activityRetries: number; bytes: number; actionTypes: Record<string, number> };
}

const DECIDED_SAMPLE = 20;

/** A sample of decided turns' histories: events, actions, retries and history bytes (protobuf) per turn. */
async function decidedTurnCost(client: Client, turnIds: readonly string[]): Promise<DecisionFigures['decidedTurn']> {
  const sample = turnIds.slice(0, DECIDED_SAMPLE);
  let events = 0;
  let actions = 0;
  let retries = 0;
  let bytes = 0;
  const types: Record<string, number> = {};
  for (const turnId of sample) {
    const history = await client.workflow.getHandle(turnId).fetchHistory();
    const list = history.events ?? [];
    events += list.length;
    const counted = actionsOf(list);
    actions += counted.actions;
    for (const [type, count] of Object.entries(counted.types)) types[type] = (types[type] ?? 0) + count;
    retries += activityRetriesOf(list);
    bytes += proto.temporal.api.history.v1.History.encode(history).finish().length;
  }
  const per = (value: number) => round(value / Math.max(1, sample.length), 2);
  return { sample: sample.length, events: per(events), actions: per(actions), activityRetries: per(retries), bytes: per(bytes), actionTypes: Object.fromEntries(Object.entries(types).map(([type, count]) => [type, per(count)])) };
}

const APPROVER_OF_TOOL: Record<string, string> = { bench_charge: 'approver-1', bench_refund: 'approver-2', bench_review: 'approver-3' };
const approverOf = (call: ListedCall) => APPROVER_OF_TOOL[call.toolName] ?? 'nobody';
/** Who lists in `measureListing`: the two large queues, the rare one, and one who may decide nothing. */
const LISTERS = ['approver-1', 'approver-2', 'approver-3', 'mallory'] as const;
const tokenOf = (identity: string) => `tok-${identity}`;

async function listApprovals(api: ApiProcess, identity: string): Promise<ListedCall[]> {
  const response = await fetch(`${api.base}/api/approvals`, { headers: { authorization: `Bearer ${tokenOf(identity)}` } });
  if (response.status !== 200) throw new Error(`GET /api/approvals as ${identity}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { calls: ListedCall[] }).calls;
}

/** Each approver's first page, timed on both processes; returns the calls listed too. */
export async function measureListing(apis: ApiProcess[]): Promise<{ figures: ListingFigures; calls: ListedCall[] }> {
  const times: number[] = [];
  const timesOf: Record<string, number[]> = {};
  const listed: Record<string, number> = {};
  let calls: ListedCall[] = [];
  for (let round_ = 0; round_ < LISTING_ROUNDS; round_++) {
    for (const [index, identity] of LISTERS.entries()) {
      // Past the API's 500 ms shared-listing window, so every read computes a listing.
      await sleep(600);
      const started = performance.now();
      const page = await listApprovals(apis[(round_ + index) % apis.length]!, identity);
      times.push(performance.now() - started);
      (timesOf[identity] ??= []).push(performance.now() - started);
      listed[identity] = page.length;
      if (identity !== 'mallory') calls = round_ === 0 ? [...calls, ...page] : calls;
      if (page.some((call) => identity !== 'mallory' && approverOf(call) !== identity)) throw new Error(`${identity} was listed a call of another approver`);
    }
  }
  if (listed.mallory !== 0) throw new Error(`mallory, who may decide nothing, was listed ${listed.mallory} calls`);
  const sorted = times.sort((a, b) => a - b);
  const p50MsByApprover = Object.fromEntries(Object.entries(timesOf).map(([identity, own]) => [identity, round(percentile([...own].sort((a, b) => a - b), 50), 0)]));
  return { figures: { listedByApprover: listed, p50MsByApprover, p50Ms: round(percentile(sorted, 50), 0), maxMs: round(sorted.at(-1)!, 0), rounds: LISTING_ROUNDS }, calls };
}

async function post(api: ApiProcess, identity: string, turnId: string, approvalId: string, body: object): Promise<number> {
  const response = await fetch(`${api.base}/api/turns/${encodeURIComponent(turnId)}/approvals/${encodeURIComponent(approvalId)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(identity)}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

export async function measureDecisions(client: Client, apis: ApiProcess[], listed: ListedCall[], options: { decisions: number; ratePerSecond: number; hostile: number; parkedQuery: string; log: (line: string) => void }): Promise<DecisionFigures> {
  const shuffled = [...listed].sort(() => Math.random() - 0.5);
  const targets = shuffled.slice(0, options.decisions);
  const untouched = shuffled.slice(options.decisions);
  if (untouched.length < 2) throw new Error('too few listed calls for hostile decisions on untouched calls');
  const windowMs = (targets.length / options.ratePerSecond) * 1000;
  const began = performance.now();
  const at = (ms: number) => sleep(Math.max(0, began + ms - performance.now()));
  const sent: Array<{ call: ListedCall; sentAt: number; answeredMs: number; status: number }> = [];
  const legit = Promise.all(targets.map(async (call, index) => {
    await at((index * 1000) / options.ratePerSecond);
    const sentAt = Date.now();
    const started = performance.now();
    const status = await post(apis[index % apis.length]!, approverOf(call), call.turnWorkflowId, call.approvalId, { approved: true, inputHash: call.inputHash });
    sent.push({ call, sentAt, answeredMs: performance.now() - started, status });
  }));
  const byKind: Record<string, Record<string, number>> = {};
  const hostileTargets = new Set<string>();
  const hostile = Promise.all(Array.from({ length: options.hostile }, async (_, index) => {
    await at((index * windowMs) / options.hostile);
    const kind = HOSTILE_KINDS[index % HOSTILE_KINDS.length]!;
    const call = untouched[index % untouched.length]!;
    hostileTargets.add(call.turnWorkflowId);
    const rightful = approverOf(call);
    const api = apis[index % apis.length]!;
    const status =
      kind === 'no-rights' ? await post(api, 'mallory', call.turnWorkflowId, call.approvalId, { approved: true, inputHash: call.inputHash })
      : kind === 'other-approver' ? await post(api, rightful === 'approver-1' ? 'approver-2' : 'approver-1', call.turnWorkflowId, call.approvalId, { approved: true, inputHash: call.inputHash })
      : kind === 'stale-input-hash' ? await post(api, rightful, call.turnWorkflowId, call.approvalId, { approved: true, inputHash: `${call.inputHash.slice(0, -4)}0000` })
      : kind === 'unknown-approval' ? await post(api, rightful, call.turnWorkflowId, `apr_unknown_${index}`, { approved: true })
      : await post(api, rightful, `cluster-park-unknown-${index}`, call.approvalId, { approved: true });
    byKind[kind] ??= {};
    byKind[kind]![status] = (byKind[kind]![status] ?? 0) + 1;
  }));
  await Promise.all([legit, hostile]);
  const windowSeconds = (performance.now() - began) / 1000;
  options.log(`  cluster: ${sent.length} decisions and ${options.hostile} hostile ones sent in ${windowSeconds.toFixed(1)} s; reading the tools' effects`);

  // A refused decision (a timeout under load, say) leaves its turn parked: only accepted ones have an effect to wait for.
  const refused = sent.filter((decision) => decision.status !== 200);
  if (refused.length > 0) options.log(`  cluster: ${refused.length} decisions refused, statuses ${JSON.stringify(refused.map((decision) => decision.status))}`);
  const accepted = sent.filter((decision) => decision.status === 200);
  const toEffect = await runPool(accepted.length, 20, async (index) => {
    const { call, sentAt } = accepted[index]!;
    const result = (await client.workflow.getHandle(call.turnWorkflowId).result()) as AgentTurnResult;
    const [toolCall] = result.toolCalls;
    if (result.status !== 'completed' || toolCall?.outcome !== 'approved' || toolCall.approval?.approver !== approverOf(call)) {
      throw new Error(`${call.turnWorkflowId} ended ${result.status}, its call ${toolCall?.outcome} by ${toolCall?.approval?.approver}`);
    }
    return (toolCall.output as { ranAt: number }).ranAt - sentAt;
  });
  // The hostile decisions' targets: every one still parked (visibility's listing of parked turns; a
  // refused legitimate decision may still have reached its turn, so the total is not the check).
  const parkedIds = new Set<string>();
  for (let attempt = 0; attempt < 30; attempt++) {
    parkedIds.clear();
    for await (const execution of client.workflow.list({ query: options.parkedQuery, pageSize: 1_000 })) parkedIds.add(execution.workflowId);
    if ([...hostileTargets].every((turnId) => parkedIds.has(turnId))) break;
    await sleep(1_000);
  }
  const untouchedStillParked = [...hostileTargets].every((turnId) => parkedIds.has(turnId)) && accepted.every((decision) => !parkedIds.has(decision.call.turnWorkflowId));
  const decidedTurn = await decidedTurnCost(client, accepted.map((decision) => decision.call.turnWorkflowId));
  const sortedEffect = toEffect.sort((a, b) => a - b);
  const sortedAnswered = sent.map((decision) => decision.answeredMs).sort((a, b) => a - b);
  const hostileAccepted = Object.values(byKind).reduce((sum, statuses) => sum + Object.entries(statuses).filter(([status]) => Number(status) < 300).reduce((total, [, count]) => total + count, 0), 0);
  return {
    decisions: sent.length,
    ratePerSecond: options.ratePerSecond,
    windowSeconds: round(windowSeconds, 1),
    toEffect: { p50: round(percentile(sortedEffect, 50), 0), p99: round(percentile(sortedEffect, 99), 0), max: round(sortedEffect.at(-1)!, 0) },
    answered: { p50: round(percentile(sortedAnswered, 50), 0), p99: round(percentile(sortedAnswered, 99), 0) },
    refused: refused.length,
    hostile: { sent: options.hostile, accepted: hostileAccepted, byKind },
    untouchedStillParked,
    decidedTurn,
  };
}
