/**
 * What a park adds to traces and metrics, from inside the workflow.
 *
 * - A span `Park:<tool>` from the park to its outcome, a child of the turn's `RunWorkflow` span
 *   when `OpenTelemetryPlugin` is on the worker (its workflow interceptors install a tracer in
 *   the sandbox and export through a sink); without the plugin the tracer is a no-op.
 * - Metrics through the workflow's `metricMeter`: `turnpike_calls_parked` and
 *   `turnpike_calls_unparked` (their difference is what is parked now, per tool), the wait in
 *   `turnpike_park_wait_ms`, and every decision in `turnpike_decisions`.
 *
 * Both are side effects the SDK suppresses during replay, and span times are workflow time, so
 * nothing here changes the workflow's commands or breaks determinism.
 */
import type { Span, TracerProvider } from '@opentelemetry/api';
import * as wf from '@temporalio/workflow';
import type { PendingToolCall } from '../types/index.js';

/** How a park ended: the decision or result, or why none came. */
export type ParkOutcome = 'approved' | 'denied' | 'submitted' | 'expired' | 'superseded' | 'cancelled';

export interface ParkTelemetry {
  end(outcome: ParkOutcome, approver?: string): void;
}

/**
 * The tracer provider `OpenTelemetryPlugin`'s workflow interceptors registered in this
 * workflow's sandbox, read from the OpenTelemetry API's global registry (the symbol every
 * `@opentelemetry/api` 1.x uses to find the registered provider), or none.
 *
 * Not through `trace.getTracer()`: importing `@opentelemetry/api` here would make every
 * workflow evaluate its own copy of that package (22 modules), and the workflow modules are
 * preloaded (shared across workflows, see preload.ts), where the package must not be: the
 * interceptors register their provider through it, which a shared, frozen copy refuses.
 */
function tracerProvider(): TracerProvider | undefined {
  const registry = (globalThis as Record<symbol, { trace?: TracerProvider } | undefined>)[Symbol.for('opentelemetry.js.api.1')];
  return registry?.trace;
}

/** A span that records nothing, for turns on a worker without a tracer provider. */
const NO_SPAN = { setAttributes: () => NO_SPAN, end: () => undefined } as unknown as Span;

function parkTags(view: PendingToolCall) {
  return { tool: view.toolName, kind: view.kind };
}

export function startPark(view: PendingToolCall): ParkTelemetry {
  const startedAt = Date.now();
  const provider = tracerProvider();
  const span: Span = !provider ? NO_SPAN : provider.getTracer('turnpike').startSpan(`Park:${view.toolName}`, {
    attributes: {
      'turnpike.tool.name': view.toolName,
      'turnpike.tool.call_id': view.toolCallId,
      'turnpike.park.kind': view.kind,
      ...(view.approvalId ? { 'turnpike.approval.id': view.approvalId } : {}),
      ...(view.reason !== undefined ? { 'turnpike.policy.reason': view.reason } : {}),
    },
  });
  wf.metricMeter.createCounter('turnpike_calls_parked', 'calls', 'Tool calls that parked for a decision or a client result').add(1, parkTags(view));
  return {
    end(outcome, approver) {
      const waitMs = Date.now() - startedAt;
      span.setAttributes({ 'turnpike.park.outcome': outcome, 'turnpike.park.wait_ms': waitMs, ...(approver ? { 'turnpike.approval.approver': approver } : {}) });
      span.end();
      const tags = { ...parkTags(view), outcome };
      wf.metricMeter.createCounter('turnpike_calls_unparked', 'calls', 'Parked tool calls that stopped waiting, by outcome').add(1, tags);
      wf.metricMeter.createHistogram('turnpike_park_wait_ms', 'int', 'ms', 'How long parked tool calls waited, by outcome').record(waitMs, tags);
      if (view.kind === 'approval' || view.kind === 'budget') recordDecision(view.toolName, outcome, false);
    },
  };
}

/** Every approval decision, a person's or a policy's (`automatic`), by tool and outcome. */
export function recordDecision(tool: string, outcome: ParkOutcome, automatic: boolean): void {
  wf.metricMeter.createCounter('turnpike_decisions', 'decisions', 'Approval decisions by tool, outcome and whether a policy made them').add(1, {
    tool,
    outcome,
    automatic: String(automatic),
  });
}
