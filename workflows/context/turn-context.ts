/**
 * Everything one turn knows while it runs, shared by the pieces of its story: the step loop
 * (`agent-turn.ts`), settling a step (`settle-step.ts`), parking (`parking.ts`), its handlers
 * (`turn-handlers.ts`), its endings (`turn-endings.ts`) and what it publishes
 * (`turn-publisher.ts`). Data and small helpers only; no command is sent from here except
 * through the publisher and the nudges.
 */
import * as wf from '@temporalio/workflow';
import { AgentCalls } from '../calls/agent-calls.js';
import { ApprovalNudges } from './approval-nudges.js';
import { SchemaCache } from '../calls/call-checks.js';
import { CallLedger } from '../calls/call-ledger.js';
import { Elicitations } from '../calls/elicitations.js';
import { TurnPublisher } from './turn-publisher.js';
import { Transcript } from './transcript.js';
import type {
  CancelToolCallInput,
  AgentTurnInput,
  CutOffStep,
  DecisionRecord,
  Message,
  ModelToolSpec,
  PendingToolCall,
  ToolCallPart,
  ToolCallRecord,
  ToolServerLeftOut,
  ToolServersWait,
  ToolSpec,
  TenantBudgetLimits,
  TurnBudget,
  TurnStatus,
  Usage,
} from '../types/index.js';

export const DEFAULT_PARK_TIMEOUT = '24h';

export class TurnContext {
  step = 0;
  /** Every tool call of this turn: kind, parked or not, resolution, result. */
  readonly ledger: CallLedger;
  /** The messages this turn added to the conversation: the model's, and the tool results. */
  readonly appended: Message[] = [];
  /** The given history and `appended`, as the model activity reads it (by reference). */
  readonly transcript: Transcript;
  /** Each call's record, in the model's call order, step by step. */
  readonly records: ToolCallRecord[] = [];
  /** Every approval decision, as it happens: the audit trail `turnState` and the result carry. */
  readonly decisions: DecisionRecord[] = [];
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  /** The turn's tools, fixed once its first model step described them. */
  specs = new Map<string, ToolSpec>();
  /** What the model is told about the turn's tools, for the `modelTools` query. */
  modelTools: ModelToolSpec[] = [];
  /** The hash later model steps name the tools by (tool-set.ts). */
  toolsHash?: string;
  /** MCP servers the first step left out of the turn's tools (it was offered all), and why. */
  toolsLeftOut: ToolServerLeftOut[] = [];
  /** MCP servers the first model step waits for, as its activity last reported them (turn-handlers.ts); cleared once it described the tools. */
  waitingForServers?: ToolServersWait;
  /** Compiled JSON schemas of tool inputs and outputs, for the update validators. */
  readonly schemas = new SchemaCache();
  /** The calls of the step in progress, so a cancellation can settle whatever is still open. */
  openStep?: ToolCallPart[];
  /** Set by supersedeTurn: no further tool runs or parks, and the turn ends after this step. */
  superseded?: { reason: string; messageId?: string };
  /** Set when the model handed the conversation to another agent (handoffs.ts). */
  handoff?: { to: string };
  /** Set when a cut-off step ended the turn. */
  cutOff?: CutOffStep;
  /** Invalid typed answers sent back to the model so far (typed-output.ts). */
  outputRetries = 0;
  /** Questions MCP servers asked while a call ran (see elicitations.ts). */
  readonly elicitations: Elicitations;
  readonly publisher: TurnPublisher;
  /** Webhook nudges to approvers, when the worker sends them. */
  readonly nudges = new ApprovalNudges();
  /** The turn's budget limits, as approvals extended them (budget-gate.ts); none without a budget. */
  budgetLimits?: TurnBudget;
  /** What a person let the turn spend beyond its tenant's budget over time, and its usage then (turn/tenant-budget-gate.ts). */
  tenantGrant?: { allowance: TenantBudgetLimits; since: Usage };
  /** Tool calls of the agent tools' child turns that ended, counted in a budgeted turn's spend (agent-tool-call.ts). */
  childToolCalls = 0;
  /** Agent tool calls whose child turn runs (agent-tool-call.ts). */
  readonly agentCalls = new AgentCalls();
  /** Running calls of `cancellable` tools, by call id: what a cancelled turn cancels where they run (turn/cancel-running-calls.ts). */
  readonly cancellableCalls = new Map<string, CancelToolCallInput>();
  /**
   * A budgeted turn's shares of its budget among the step's agent tool calls (agents/child-budgets.ts):
   * by call id, the budget a running child was given, or null for a call that may still start one.
   */
  readonly childShares = new Map<string, TurnBudget | null>();

  constructor(readonly input: AgentTurnInput) {
    // A run that a longer turn handed over to goes on where the one before stopped (turn-hand-over.ts).
    const carried = input?.carried;
    this.ledger = carried ? CallLedger.restore(carried.calls) : new CallLedger();
    if (carried) {
      this.step = carried.step;
      this.appended.push(...carried.appended);
      this.records.push(...carried.records);
      this.decisions.push(...carried.decisions);
      Object.assign(this.usage, carried.usage);
      this.specs = new Map(carried.tools.specs.map((spec) => [spec.name, spec]));
      this.modelTools = carried.tools.modelTools;
      this.toolsHash = carried.tools.toolsHash;
      this.toolsLeftOut = carried.tools.leftOut ?? [];
      this.outputRetries = carried.outputRetries ?? 0;
      this.childToolCalls = carried.childToolCalls ?? 0;
    }
    const budget = carried?.budget ?? input?.budget;
    if (budget && typeof budget === 'object') this.budgetLimits = { ...budget };
    this.transcript = new Transcript(Array.isArray(input?.messages) ? input.messages : [], this.appended, input?.forkOf);
    this.elicitations = new Elicitations(input?.clientToolTimeout ?? DEFAULT_PARK_TIMEOUT, () => this.setStatus(this.waiting() ? 'awaiting-input' : 'running'));
    this.publisher = new TurnPublisher(this.ledger, this.elicitations, this.decisions, input?.conversationId, carried?.stream, input?.parentTurn?.turnId);
  }

  get status(): TurnStatus {
    return this.publisher.status;
  }

  setStatus(status: TurnStatus): void {
    this.publisher.setStatus(status);
  }

  /** Whether anything waits for a person: a parked call, or a running call's question. */
  waiting(): boolean {
    return this.ledger.hasParked() || this.elicitations.hasOpen();
  }

  /** A call whose tool is running now (not parked, not settled), which may ask a question. */
  runningCall(toolCallId: string): { toolName: string; input: unknown } | undefined {
    const entry = this.ledger.get(toolCallId);
    if (!entry || entry.kind !== 'server' || entry.parked || entry.settlement) return undefined;
    return { toolName: entry.call.toolName, input: entry.validatedInput ?? entry.call.input };
  }

  /** Records a person's decision, or the end of a wait without one, and nudges about it. */
  noteDecision(view: PendingToolCall, decision: DecisionRecord): void {
    this.decisions.push(decision);
    this.publisher.publishSoon();
    this.nudges.send(this.nudgeContext(), view, 'decided', decision);
  }

  /** What a nudge says about the turn it comes from. */
  nudgeContext(): { turnId: string; conversationId?: string; parentTurnId?: string } {
    return {
      turnId: wf.workflowInfo().workflowId,
      ...(this.input.conversationId ? { conversationId: this.input.conversationId } : {}),
      ...(this.input.parentTurn ? { parentTurnId: this.input.parentTurn.turnId } : {}),
    };
  }

  newApprovalId(): string {
    return `apr_${wf.uuid4().replace(/-/g, '')}`;
  }
}

/** Workflow time: the time of the current workflow task, the same on replay. */
export function now(): string {
  return new Date().toISOString();
}

/** The reply's text: text parts only, never reasoning, which the provider keeps apart from the answer. */
export function textOf(content: Array<{ type: string; text?: string }>): string {
  return content
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('');
}
