/**
 * Turn events as AI SDK UI message stream chunks — what `useChat` (AI SDK 6/7) reads from a
 * response with `x-vercel-ai-ui-message-stream: v1`. Pure: one mapper per response, fed the
 * turn's events in order.
 *
 * A retried model step becomes `reset-step` (the client drops what the earlier attempt showed);
 * a parked approval becomes `tool-approval-request` with the workflow's approvalId, and a
 * settled call `tool-output-available`, `tool-output-denied` or `tool-output-error`. MCP servers
 * a turn went without (`tools-left-out`) become a `data-tools-left-out` part.
 * A budget approval (`budget-requested`) becomes a `data-budget-requested` part.
 */
import type { TurnEvent } from '../workflows/turn-events.js';

/** The chunks this mapper writes (a subset of the AI SDK's `UIMessageChunk`). */
export type UiMessageChunk =
  | { type: 'start'; messageId: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'reset-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; input: unknown; errorText: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string; reason?: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'data-tools-left-out'; data: { servers: Array<{ server: string; reason: string }> } }
  | { type: 'data-budget-requested'; data: { approvalId: string; input: unknown; expiresAt: string } }
  | { type: 'finish'; finishReason: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'other' }
  | { type: 'error'; errorText: string };

export class UiMessageChunkMapper {
  private inStep = false;
  private step = 0;
  private text?: string;
  private reasoning?: string;

  /** The chunks for one turn event, in order. */
  map(event: TurnEvent): UiMessageChunk[] {
    const chunks: UiMessageChunk[] = [];
    // A model step's deltas, its calls and their results are one UI step; the next model step starts another.
    const open = (step: number) => {
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
        this.text = undefined;
        this.reasoning = undefined;
        if (this.inStep) chunks.push({ type: 'reset-step' });
        break;
      case 'step-finished':
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
      case 'approval-requested':
        open(event.step);
        chunks.push({ type: 'tool-approval-request', approvalId: event.approvalId, toolCallId: event.toolCallId, ...(event.reason !== undefined ? { reason: event.reason } : {}) });
        break;
      case 'budget-requested':
        // Not a call of the model: a data part, decided with the turn's approval (docs/budgets.md).
        chunks.push({ type: 'data-budget-requested', data: { approvalId: event.approvalId, input: event.input, expiresAt: event.expiresAt } });
        break;
      case 'client-tool-requested':
        // The call is already shown as input-available; useChat's onToolCall answers it.
        break;
      case 'tool-result':
        open(event.step);
        if (event.outcome === 'denied') chunks.push({ type: 'tool-output-denied', toolCallId: event.toolCallId });
        else if (event.isError) chunks.push({ type: 'tool-output-error', toolCallId: event.toolCallId, errorText: typeof event.output === 'string' ? event.output : JSON.stringify(event.output) });
        else chunks.push({ type: 'tool-output-available', toolCallId: event.toolCallId, output: event.output });
        break;
      case 'tools-left-out':
        // A data part of the message: the chat can say which tools this answer went without.
        chunks.push({ type: 'data-tools-left-out', data: { servers: event.servers } });
        break;
      case 'turn-finished':
        chunks.push(...this.end(event.status === 'completed' ? 'stop' : event.status === 'max-tokens' ? 'length' : event.status === 'refused' ? 'content-filter' : 'other'));
        break;
    }
    return chunks;
  }

  /** Closes the response: open parts, the step, then `finish`. */
  end(finishReason: Extract<UiMessageChunk, { type: 'finish' }>['finishReason']): UiMessageChunk[] {
    const chunks = this.closeParts();
    if (this.inStep) chunks.push({ type: 'finish-step' });
    this.inStep = false;
    chunks.push({ type: 'finish', finishReason });
    return chunks;
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
