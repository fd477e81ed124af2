/**
 * `forkTurn`: a new turn that starts where another turn was at the end of its step k, on another
 * model, system prompt or tools, for debugging and evaluating ("what would it have done at step 7
 * with the other model?"). See docs/conversations.md, "Forking a turn from step k".
 *
 * The new turn starts from the original's transcript (the `transcript` query: the history it was
 * given, then what it appended) cut after step k's tool results: every tool call of steps 1..k is
 * there with its result, so none runs again. That prefix is shared by reference, not copied: the
 * fork's input carries `forkOf` (the original's run, the prefix's length and chain hash) and no
 * messages, and whoever reads the fork's transcript reads the prefix from the original
 * (`readTranscript`; the model activity checks it against the hash). The original is only read,
 * never changed, and must stay readable (within the namespace's retention) while the fork runs.
 * The fork is found again from the original by the `TurnpikeForkOf` search attribute it is
 * started with (`listForks`).
 */
import type { Client } from '@temporalio/client';
import type { Payload, Priority } from '@temporalio/common';
import { turnpikeForkOfKey, turnpikeTenantKey } from '../workflows/context/search-attributes.js';
import { readTranscript } from '../workflows/context/fork-transcript.js';
import { forkReferenceOf, transcriptThroughStep } from '../workflows/context/fork-reference.js';
import { AGENT_TURN_WORKFLOW, transcriptQuery } from '../workflows/messages/definitions.js';
import type { agentTurn } from '../workflows/registered-workflows.js';
import type { AgentTurnInput, ForkReference, Message, ModelSettings } from '../workflows/types/index.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from './errors.js';
import { STARTED_BY_MEMO_KEY } from './listings.js';
import { rejections } from './rejections.js';
import { withModelTaskQueue, type WorkflowStarter } from './turns.js';
import { errorChainText, refuseWithoutTenantAttribute, startPlacement, type TurnPriority } from './tenants.js';
import { startWithApprovers } from './approvers-attribute.js';

/** The memo key of a forked turn: `{ turnId, atStep }` of the turn it was forked from. */
export const FORK_OF_MEMO_KEY = 'turnpike.forkOf';

export interface ForkTurnOptions {
  /** The last step of the original whose messages (and tool results) the fork carries; at least 1. */
  atStep: number;
  model?: ModelSettings;
  system?: string;
  tools?: string[];
  /** The fork's priority; default the original's. Its tenant is always the original's. */
  priority?: TurnPriority;
  /** The new turn's id; default `<turnId>/fork-<atStep>-<n>`, n counting forks started by this process. */
  turnId?: string;
  startedBy?: string;
}

export interface ForkTurnResult {
  turnId: string;
  forkOf: { turnId: string; atStep: number };
  /** How many messages the new turn starts with. */
  messages: number;
}

let forks = 0;

/** The original turn's input, from its latest run's start event. */
export async function originalInput(starter: Pick<WorkflowStarter, 'client'>, turnId: string): Promise<AgentTurnInput> {
  const handle = starter.client.workflow.getHandle<typeof agentTurn>(turnId);
  const history = await rejections(handle.fetchHistory());
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new TurnpikeNotFoundError(`Turn ${turnId} not found`);
  const { payloadConverter, payloadCodecs } = starter.client.options.loadedDataConverter;
  let payloads = (started.input?.payloads ?? []) as Payload[];
  for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  return payloadConverter.fromPayload<AgentTurnInput>(payloads[0]);
}

/**
 * A turn's whole transcript (the history it was given, then what it appended), a fork's prefix
 * read from the turn it was forked from. `runId` undefined: the turn's latest run.
 */
export async function readTurnTranscript(client: Client, turnId: string, runId?: string): Promise<Message[]> {
  return readTranscript(
    (workflowId, run, request) => rejections(client.workflow.getHandle<typeof agentTurn>(workflowId, run).query(transcriptQuery, request)),
    turnId,
    runId,
  );
}

export { transcriptThroughStep };

export async function forkTurn(starter: WorkflowStarter, turnId: string, options: ForkTurnOptions): Promise<ForkTurnResult> {
  if (!Number.isInteger(options.atStep) || options.atStep < 1) throw new TurnpikeRejectedError(`Invalid forkTurn: atStep must be a whole number of at least 1, not ${options.atStep}`, 'InvalidRequest');
  const input = await originalInput(starter, turnId);
  // The run that answers now is the one the fork reads its prefix from.
  const described = await rejections(starter.client.workflow.getHandle(turnId).describe());
  const { runId } = described;
  // The fork runs for the original's tenant, at the original's priority unless told otherwise.
  const placement = forkPlacement(starter, described, options);
  const reference = await forkReferenceAt(starter.client, turnId, runId, input, options.atStep);
  const { carried: _carried, parentTurn: _parent, notifyParent: _notify, conversationId: _conversation, forkOf: _forkOf, ...settings } = input;
  const forkInput: AgentTurnInput = {
    // The original's model queue, or else this client's.
    ...withModelTaskQueue(settings, starter.modelTaskQueue),
    messages: [],
    forkOf: reference,
    ...(options.model ? { model: options.model } : {}),
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
  };
  const forkId = options.turnId ?? `${turnId}/fork-${options.atStep}-${++forks}-${Date.now().toString(36)}`;
  const forkOf = { turnId, atStep: options.atStep };
  const given = [{ key: turnpikeForkOfKey, value: turnId }, ...(placement.typedSearchAttributes ?? [])];
  // Started with `TurnpikeApprovers` and `TurnpikeNextExpiry` where the namespace has them (client/approvers-attribute.ts).
  await startWithApprovers(starter.client, given, (typedSearchAttributes) =>
    starter.client.workflow.start<typeof agentTurn>(AGENT_TURN_WORKFLOW, {
      taskQueue: starter.taskQueue,
      workflowId: forkId,
      args: [forkInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
      memo: { [FORK_OF_MEMO_KEY]: forkOf, ...(options.startedBy !== undefined ? { [STARTED_BY_MEMO_KEY]: options.startedBy } : {}) },
      ...placement,
      typedSearchAttributes: typedSearchAttributes ?? given,
    }),
  ).catch((error: unknown) => {
    // The SDK says "Failed to start Workflow"; the server's reason (no mapping for TurnpikeForkOf) is in its cause.
    if (/TurnpikeForkOf/.test(errorChainText(error))) {
      throw new TurnpikeRejectedError(`Invalid forkTurn: the namespace has no search attribute TurnpikeForkOf; register it with \`temporal operator search-attribute create --name TurnpikeForkOf --type Keyword\` (docs/operators.md)`, 'InvalidRequest');
    }
    throw error;
  }).catch(refuseWithoutTenantAttribute('forkTurn'));
  return { turnId: forkId, forkOf, messages: reference.prefixLength };
}

/**
 * The reference a fork of `turnId` (its run `runId`, whose input is `input`) after step `atStep`
 * starts with: the prefix's length, chain hash and tool call ids. Refused when the turn has no
 * such step ending in tool results.
 */
export async function forkReferenceAt(client: Client, turnId: string, runId: string, input: AgentTurnInput, atStep: number): Promise<ForkReference> {
  const reference = forkReferenceOf(turnId, runId, input, await readTurnTranscript(client, turnId, runId), atStep);
  if (!reference) throw new TurnpikeRejectedError(`Invalid forkTurn: turn ${turnId} has no step ${atStep} ending in tool results to fork after`, 'InvalidRequest');
  return reference;
}

/** A fork's tenant (the original's) and priority (the one asked for, else the original's), checked. */
function forkPlacement(starter: WorkflowStarter, original: { typedSearchAttributes: { get(key: typeof turnpikeTenantKey): string | undefined }; priority?: Priority }, options: ForkTurnOptions) {
  const tenant = original.typedSearchAttributes.get(turnpikeTenantKey);
  const given = startPlacement('forkTurn', { ...(tenant ? { tenant } : {}), ...(options.priority !== undefined ? { priority: options.priority } : {}) }, starter.tenantWeights);
  const priorityKey = options.priority === undefined ? original.priority?.priorityKey : undefined;
  if (!priorityKey) return given;
  return { ...given, priority: { ...given.priority, priorityKey } };
}

/** A fork of a turn, as the original's listing shows it. */
export interface TurnFork {
  turnId: string;
  atStep: number;
  /** The fork's workflow status: `RUNNING`, `COMPLETED`, … */
  status: string;
  startedAt: Date;
  startedBy?: string;
}

/** A string literal for a visibility query. */
function visibilityString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The forks started from `turnId`, oldest first, from visibility (`TurnpikeForkOf`). Visibility
 * is eventually consistent: a fork started a moment ago may be listed a moment later.
 */
export async function listForks(client: Client, turnId: string, limit = 200): Promise<TurnFork[]> {
  const forks: TurnFork[] = [];
  for await (const execution of client.workflow.list({ query: `TurnpikeForkOf=${visibilityString(turnId)}`, pageSize: limit })) {
    const forkOf = execution.memo?.[FORK_OF_MEMO_KEY] as { atStep?: unknown } | undefined;
    const startedBy = execution.memo?.[STARTED_BY_MEMO_KEY];
    forks.push({
      turnId: execution.workflowId,
      atStep: typeof forkOf?.atStep === 'number' ? forkOf.atStep : 0,
      status: execution.status.name,
      startedAt: execution.startTime,
      ...(typeof startedBy === 'string' ? { startedBy } : {}),
    });
    if (forks.length >= limit) break;
  }
  return forks.sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
}
