/**
 * The turn part of `TurnpikeClient`: starting a turn, who started it, a parked call's context,
 * waiting for its result, one event of its stream. The client's methods of the same names call
 * these; decisions and results go through `rejections.ts`.
 */
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { AGENT_TURN_WORKFLOW, callContextQuery, turnEventsQuery } from '../workflows/messages/definitions.js';
import { agentConversationIdKey, agentTurnStatusKey, turnpikeTenantKey } from '../workflows/context/search-attributes.js';
import { PENDING_MEMO_KEY, readPendingMemo, type PendingMemo } from '../workflows/context/pending-memo.js';
import type { agentTurn } from '../workflows/registered-workflows.js';
import type { TurnEventRecord } from '../workflows/types/turn-events.js';
import type { AgentTurnInput, AgentTurnResult, CallContext } from '../workflows/types/index.js';
import type { ContentStore } from '../content/content-store.js';
import { storeLargeParts } from '../content/stored-content.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from './errors.js';
import { historyLimitProblem } from '../workflows/turn/turn-hand-over.js';
import { STARTED_BY_MEMO_KEY } from './listings.js';
import { rejections } from './rejections.js';
import { toOutputSpec, type OutputOption } from './typed-output.js';
import { refuseWithoutTenantAttribute, startPlacement, type TenantPlacement } from './tenants.js';
import { startWithApprovers } from './approvers-attribute.js';

/** Who started a turn or a conversation, and the conversation a turn belongs to (`describeStart`). */
export interface StartRecord {
  startedBy?: string;
  conversationId?: string;
  /** The tenant it runs for (`TurnpikeTenant`), when started with one. */
  tenant?: string;
  /**
   * A turn's parked calls and decisions so far (its `turnpikePending` memo), present only while
   * the turn is `awaiting-input`, the one status in which the memo is kept current.
   */
  parked?: PendingMemo;
}

/** What `startTurn` takes: a turn's input, with a typed answer's schema as zod or JSON Schema. */
export type StartTurnInput = Omit<AgentTurnInput, 'output'> & { output?: OutputOption };

/** What starting a workflow needs of the client: `TurnpikeClient` is one. */
export interface WorkflowStarter {
  readonly client: Client;
  readonly taskQueue: string;
  readonly contentStore: ContentStore;
  /** Fairness weights by tenant (`TurnpikeClientOptions.tenantWeights`). */
  readonly tenantWeights?: Readonly<Record<string, number>>;
  /** The task queue of its turns' model calls (`TurnpikeClientOptions.modelTaskQueue`). */
  readonly modelTaskQueue?: string;
}

/** Who starts a turn, for whom and how urgently, beside its id (`TurnpikeClient.startTurn`). */
export interface StartTurnOptions extends TenantPlacement {
  turnId: string;
  startedBy?: string;
  /** More memo fields to record on the turn's workflow (string values; `startedBy` wins over its own key). */
  memo?: Record<string, string>;
}

/** Starts a turn, idempotent by `turnId` (see `TurnpikeClient.startTurn`). */
export async function startTurn(starter: WorkflowStarter, input: StartTurnInput, options: StartTurnOptions): Promise<WorkflowHandle<typeof agentTurn>> {
  // Refused before anything starts: a turn would fail at once with it, or never end.
  const limitProblem = startProblem(input);
  if (limitProblem) throw new TurnpikeRejectedError(`Invalid startTurn: ${limitProblem}; no turn was started`, 'InvalidRequest');
  // Checked before anything is stored or started.
  const placement = startPlacement('startTurn', options, starter.tenantWeights);
  // Images and documents of 128 KiB or more go to the content store; the turn gets references.
  const messages = Array.isArray(input?.messages) ? await storeLargeParts(input.messages, starter.contentStore) : input?.messages;
  // A typed answer's zod schema is sent as its JSON Schema (client/typed-output.ts).
  const given = input?.output;
  const output = given && typeof given === 'object' ? toOutputSpec(given) : given;
  const built = (messages === input?.messages && given === undefined ? input : { ...input, messages, ...(output !== undefined ? { output } : {}) }) as AgentTurnInput;
  // The client's model queue, unless the input names its own; without one the input is as given.
  const turnInput = withModelTaskQueue(built, starter.modelTaskQueue);
  // Started with `TurnpikeApprovers` and `TurnpikeNextExpiry` where the namespace has them (client/approvers-attribute.ts).
  return startWithApprovers(starter.client, placement.typedSearchAttributes, (typedSearchAttributes) =>
    starter.client.workflow.start<typeof agentTurn>(AGENT_TURN_WORKFLOW, {
      taskQueue: starter.taskQueue,
      workflowId: options.turnId,
      args: [turnInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...(options.startedBy !== undefined || options.memo !== undefined ? { memo: { ...options.memo, ...(options.startedBy !== undefined ? { [STARTED_BY_MEMO_KEY]: options.startedBy } : {}) } } : {}),
      ...placement,
      ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
    }),
  ).catch(refuseWithoutTenantAttribute('startTurn'));
}

/** What is wrong with a turn's `historyLimit` (docs/conversations.md, "Long turns"), or undefined. */
function startProblem(input: StartTurnInput): string | undefined {
  const limit: unknown = input?.historyLimit;
  if (limit !== undefined && (limit === null || typeof limit !== 'object' || Array.isArray(limit))) return 'historyLimit must be an object { events?, bytes? }';
  return historyLimitProblem(limit)?.problem;
}

/** Who started a workflow and its conversation, from its description (see `TurnpikeClient.describeStart`). */
export async function describeStart(client: Client, workflowId: string): Promise<StartRecord | undefined> {
  let description: Awaited<ReturnType<WorkflowHandle['describe']>>;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as { code?: number })?.code === 5) return undefined;
    throw error;
  }
  const startedBy = description.memo?.[STARTED_BY_MEMO_KEY];
  const conversationId = description.typedSearchAttributes.get(agentConversationIdKey);
  const tenant = description.typedSearchAttributes.get(turnpikeTenantKey);
  const awaiting = description.typedSearchAttributes.get(agentTurnStatusKey) === 'awaiting-input';
  const parked = awaiting ? readPendingMemo(description.memo?.[PENDING_MEMO_KEY]) : undefined;
  return { ...(typeof startedBy === 'string' ? { startedBy } : {}), ...(conversationId ? { conversationId } : {}), ...(tenant ? { tenant } : {}), ...(parked ? { parked } : {}) };
}

/** A parked call's context; not found for a call the turn did not make. */
export async function callContext(turn: WorkflowHandle<typeof agentTurn>, toolCallId: string): Promise<CallContext> {
  try {
    return await rejections(turn.query(callContextQuery, { toolCallId }));
  } catch (error) {
    if (error instanceof Error && /made no tool call/.test(error.message)) throw new TurnpikeNotFoundError(error.message);
    throw error;
  }
}

/** A turn's result; with `waitForStart`, a turn not started yet is waited for (see `TurnpikeClient.turnResult`). */
export async function turnResult(turn: () => WorkflowHandle<typeof agentTurn>, options: { waitForStart?: boolean; pollIntervalMs?: number }): Promise<AgentTurnResult> {
  for (;;) {
    try {
      return await rejections(turn().result());
    } catch (error) {
      if (!(options.waitForStart && error instanceof TurnpikeNotFoundError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, options.pollIntervalMs ?? 250));
    }
  }
}

/** The event at `offset` of a turn's stream, by one query; undefined when the stream holds none there. */
export async function turnEventAt(turn: WorkflowHandle<typeof agentTurn>, offset: number): Promise<TurnEventRecord | undefined> {
  const page = await rejections(turn.query(turnEventsQuery, { fromOffset: offset, limit: 1 }));
  const [record] = page.events;
  return record?.offset === offset ? record : undefined;
}

/** The input with the client's model task queue, unless it has one (or the client has none). */
export function withModelTaskQueue<T extends { modelTaskQueue?: string }>(input: T, modelTaskQueue: string | undefined): T {
  return modelTaskQueue === undefined || input?.modelTaskQueue !== undefined ? input : { ...input, modelTaskQueue };
}
