/**
 * Turn events as AI SDK UI message stream chunks — what `useChat` (AI SDK 6/7) reads from a
 * response with `x-vercel-ai-ui-message-stream: v1`. Pure: one mapper per response, fed the
 * turn's events in order.
 *
 * A retried model step becomes `reset-step` (the client drops what the earlier attempt showed);
 * a parked approval becomes `tool-approval-request` with the workflow's approvalId, and a
 * settled call `tool-output-available`, `tool-output-denied` or `tool-output-error`. MCP servers
 * a turn went without (`tools-left-out`) become a `data-tools-left-out` part; those a model step
 * waits for (`servers-unavailable`) a `data-servers-unavailable` part, one per step, replaced in
 * place by each later report. A vote, delegation or escalation step that decides nothing yet
 * (`approval-progress`) is a `data-approval-progress` part, one per approval, replaced in place.
 *
 * A budget approval is not a call of the model, so never a tool part: it is one `data-budget`
 * part whose id is its approvalId, first `requested`, then replaced in place by its `decided`
 * state (`budgetDecided`, from the turn's decision record). A typed answer is a `data-output`
 * part (ui-output-part.ts); its text deltas stay text parts too.
 */
import { SOURCES_TOOL_NAME } from '../activities/providers/ai-sdk-provider-tools.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';
import type { DecisionRecord, TurnBudget } from '../workflows/types/index.js';
import type { UiMessageChunk } from './ui-message-chunk.js';
import { OutputPart, type PartialJsonParser } from './ui-output-part.js';

type BudgetRequested = Extract<TurnEvent, { type: 'budget-requested' }>;

/** The name budget approvals show under (workflows/turn/budget-gate.ts); never a tool the model has. */
const BUDGET_TOOL_NAME = 'turnpike_budget';
/** The events that join their step's UI step (and a `tool-result`, unless a budget's). */
const STEP_EVENTS: ReadonlySet<string> = new Set(['text-delta', 'reasoning-delta', 'tool-input-start', 'tool-input-delta', 'tool-call', 'provider-tool', 'approval-requested']);

export interface UiMessageChunkMapperOptions {
  /** The turn asks for a typed answer: stream it as partial objects with this parser. */
  typedOutput?: PartialJsonParser;
}

export class UiMessageChunkMapper {
  private inStep = false;
  private step = 0;
  private text?: string;
  private reasoning?: string;
  private readonly output?: OutputPart;

  constructor(options: UiMessageChunkMapperOptions = {}) {
    if (options.typedOutput) this.output = new OutputPart(options.typedOutput);
  }

  /** The decided state of a budget approval, replacing its requested part in the message. */
  static budgetDecided(request: BudgetRequested, decision: DecisionRecord): UiMessageChunk {
    const edited = (decision.editedInput as { extendBy?: TurnBudget } | undefined)?.extendBy;
    return {
      type: 'data-budget',
      id: request.approvalId,
      data: {
        state: 'decided',
        approvalId: request.approvalId,
        toolCallId: request.toolCallId,
        input: request.input,
        outcome: decision.outcome,
        ...(decision.approved ? { extendBy: edited ?? request.input.extendBy } : {}),
        ...(decision.approver !== undefined ? { approver: decision.approver } : {}),
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
        decidedAt: decision.decidedAt,
      },
    };
  }

  /** The model step whose UI step this event joins; undefined for one that joins none (a step's end, a budget, data parts, the turn's end). */
  static stepOf(event: TurnEvent): number | undefined {
    if (event.type === 'tool-result') return event.toolName === BUDGET_TOOL_NAME ? undefined : event.step;
    return STEP_EVENTS.has(event.type) ? (event as { step: number }).step : undefined;
  }

  /**
   * This response continues a message whose last UI step shows model step `step` (a chat
   * continued after an approval): that step's later events join it, so a call's input finds the
   * part its streamed input opened there, instead of a new UI step getting a second part.
   */
  continueStep(step: number): void {
    this.inStep = true;
    this.step = step;
  }

  /** The chunks for one turn event, in order. */
  async map(event: TurnEvent): Promise<UiMessageChunk[]> {
    const chunks: UiMessageChunk[] = [];
    // A model step's deltas, its calls and their results are one UI step; the next model step starts another.
    // Read live, a step's deltas may come before the previous step's last durable events (its
    // calls, results, `step-finished`: docs/streaming.md): those join the open step, never reopen theirs.
    const open = (step: number) => {
      if (this.inStep && step < this.step) return;
      if (this.inStep && step !== this.step) {
        chunks.push(...this.closeParts(), { type: 'finish-step' });
        this.inStep = false;
      }
      if (!this.inStep) chunks.push({ type: 'start-step' });
      this.inStep = true;
      this.step = step;
    };
    switch (event.type) {
      case 'text-delta':
      case 'reasoning-delta': {
        open(event.step);
        const kind = event.type === 'text-delta' ? 'text' : 'reasoning';
        const id = `${kind}-${event.step}-${event.attempt}`;
        if (this[kind] !== id) {
          chunks.push(...this.closeParts());
          chunks.push({ type: `${kind}-start`, id });
          this[kind] = id;
        }
        chunks.push({ type: `${kind}-delta`, id, delta: event.text });
        const partial = event.type === 'text-delta' ? await this.output?.delta(event) : undefined;
        if (partial) chunks.push(partial);
        break;
      }
      case 'tool-input-start':
        open(event.step);
        chunks.push({ type: 'tool-input-start', toolCallId: event.toolCallId, toolName: event.toolName });
        break;
      case 'tool-input-delta':
        open(event.step);
        chunks.push({ type: 'tool-input-delta', toolCallId: event.toolCallId, inputTextDelta: event.inputTextDelta });
        break;
      case 'step-retry':
        this.output?.retried(event);
        this.text = undefined;
        this.reasoning = undefined;
        if (this.inStep) chunks.push({ type: 'reset-step' });
        break;
      case 'step-finished':
        // An earlier step's end, read after a later step's live deltas: its parts were closed when that step opened.
        if (this.inStep && event.step < this.step) break;
        chunks.push(...this.closeParts());
        break;
      case 'tool-call':
        open(event.step);
        chunks.push(
          event.invalid !== undefined
            ? { type: 'tool-input-error', toolCallId: event.toolCallId, toolName: event.toolName, input: event.input, errorText: event.invalid }
            : { type: 'tool-input-available', toolCallId: event.toolCallId, toolName: event.toolName, input: event.input },
        );
        break;
      case 'provider-tool':
        open(event.step);
        chunks.push(...providerToolChunks(event));
        break;
      case 'approval-requested':
        open(event.step);
        chunks.push({ type: 'tool-approval-request', approvalId: event.approvalId, toolCallId: event.toolCallId, ...(event.reason !== undefined ? { reason: event.reason } : {}) });
        break;
      case 'budget-requested': {
        // Not a call of the model: a data part, decided like a tool approval (docs/budgets.md).
        const { approvalId, toolCallId, input, inputHash, reason, expiresAt } = event;
        chunks.push({ type: 'data-budget', id: approvalId, data: { state: 'requested', approvalId, toolCallId, input, inputHash, ...(reason !== undefined ? { reason } : {}), expiresAt } });
        break;
      }
      case 'client-tool-requested':
        // The call is already shown as input-available; useChat's onToolCall answers it.
        break;
      case 'tool-result':
        // A budget approval's settlement is its `decided` data part, never a tool chunk.
        if (event.toolName === BUDGET_TOOL_NAME) break;
        open(event.step);
        if (event.outcome === 'denied') chunks.push({ type: 'tool-output-denied', toolCallId: event.toolCallId });
        else if (event.isError) chunks.push({ type: 'tool-output-error', toolCallId: event.toolCallId, errorText: typeof event.output === 'string' ? event.output : JSON.stringify(event.output) });
        else chunks.push({ type: 'tool-output-available', toolCallId: event.toolCallId, output: event.output });
        break;
      case 'approval-progress': {
        // A vote, delegation or escalation that decided nothing yet: one part per approval, replaced in place.
        const { approvalId, toolCallId, change, progress } = event;
        chunks.push({ type: 'data-approval-progress', id: `approval-progress-${approvalId}`, data: { approvalId, toolCallId, change, progress } });
        break;
      }
      case 'tools-left-out':
        // A data part of the message: the chat can say which tools this answer went without.
        chunks.push({ type: 'data-tools-left-out', data: { servers: event.servers } });
        break;
      case 'servers-unavailable': {
        // The step is being retried: the chat can say what it waits for (same id: replaced in place).
        const { type: _type, ...wait } = event;
        chunks.push({ type: 'data-servers-unavailable', id: `servers-unavailable-${event.step}`, data: wait });
        break;
      }
      case 'turn-finished': {
        const last: UiMessageChunk[] = [];
        const output = OutputPart.finished(event);
        if (output) last.push(output);
        // The answer never matched the schema: the errors in the part, and an error for the chat
        // (useChat stops reading at an error chunk, so it comes after the parts are closed).
        if (event.status === 'invalid-output') last.push({ type: 'error', errorText: `The answer did not match the output schema (invalid-output): ${(event.outputErrors ?? []).join('; ')}` });
        chunks.push(...this.end(finishReason(event.status), last));
        break;
      }
    }
    return chunks;
  }

  /** Closes the response: open parts, the step, `last`, then `finish`. */
  end(reason: FinishReason, last: UiMessageChunk[] = []): UiMessageChunk[] {
    const chunks = this.closeParts();
    if (this.inStep) chunks.push({ type: 'finish-step' });
    this.inStep = false;
    chunks.push(...last, { type: 'finish', finishReason: reason });
    return chunks;
  }

  /** The part a typed turn's stream starts with (a new turn's stream, or one continuing it). */
  startOutput(): UiMessageChunk[] {
    return this.output ? [OutputPart.started()] : [];
  }

  private closeParts(): UiMessageChunk[] {
    const chunks: UiMessageChunk[] = [];
    if (this.text) chunks.push({ type: 'text-end', id: this.text });
    if (this.reasoning) chunks.push({ type: 'reasoning-end', id: this.reasoning });
    this.text = undefined;
    this.reasoning = undefined;
    return chunks;
  }
}

type FinishReason = Extract<UiMessageChunk, { type: 'finish' }>['finishReason'];

function finishReason(status: Extract<TurnEvent, { type: 'turn-finished' }>['status']): FinishReason {
  if (status === 'completed') return 'stop';
  if (status === 'max-tokens') return 'length';
  if (status === 'refused') return 'content-filter';
  if (status === 'invalid-output') return 'error';
  return 'other';
}

/**
 * A hosted tool the provider ran: its input and output as one provider-executed tool part, then
 * what it found or cited as source parts (`useChat` shows them under the answer). The sources of
 * an AI SDK model's step (the `sources` part, ai-sdk-provider-tools.ts) are no call: they are
 * source parts only, `source-url` and `source-document`, as the AI SDK's own UI message stream
 * sends a model's `source` parts.
 */
function providerToolChunks(event: Extract<TurnEvent, { type: 'provider-tool' }>): UiMessageChunk[] {
  const { toolCallId, toolName, input, output } = event;
  const sources = (event.sources ?? []).map((source, index): UiMessageChunk => ({
    type: 'source-url',
    sourceId: `${toolCallId}-${index}`,
    url: source.url,
    ...(source.title !== undefined ? { title: source.title } : {}),
  }));
  if (toolName === SOURCES_TOOL_NAME) return [...sources, ...documentSources(toolCallId, output)];
  return [
    { type: 'tool-input-available', toolCallId, toolName, input, providerExecuted: true },
    event.isError
      ? { type: 'tool-output-error', toolCallId, errorText: typeof output === 'string' ? output : JSON.stringify(output), providerExecuted: true }
      : { type: 'tool-output-available', toolCallId, output, providerExecuted: true },
    ...sources,
  ];
}

/** The document sources among a `sources` part's output (the URL ones are its `sources`). */
function documentSources(toolCallId: string, output: unknown): UiMessageChunk[] {
  const documents = (Array.isArray(output) ? output : []).filter(
    (source): source is { title: string; mediaType: string; filename?: string } => typeof source?.mediaType === 'string' && source.url === undefined,
  );
  return documents.map(({ title, mediaType, filename }, index) => ({
    type: 'source-document',
    sourceId: `${toolCallId}-document-${index}`,
    mediaType,
    title,
    ...(filename !== undefined ? { filename } : {}),
  }));
}
