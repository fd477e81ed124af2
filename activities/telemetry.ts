/**
 * What turnpike's activities add to a trace and to metrics. With `OpenTelemetryPlugin`
 * (`@temporalio/interceptors-opentelemetry`) on the worker, each activity runs inside its
 * `RunActivity:<name>` span; these attributes say what the model call or tool call did. Without
 * it there is no active span and nothing is recorded. Metrics go through the activity's
 * `metricMeter`, to whatever the worker's Runtime exports (`runWorker`: Prometheus).
 */
import { trace, type Attributes } from '@opentelemetry/api';
import type { Context } from '@temporalio/activity';
import type { ModelStepInput, ModelStepResult } from '../workflows/types/index.js';

/** Model call: GenAI semantic-convention attributes, and the tokens counter. */
export function recordModelCall(context: Context, input: ModelStepInput, result: ModelStepResult): void {
  trace.getActiveSpan()?.setAttributes({
    'gen_ai.system': input.model.provider,
    'gen_ai.request.model': input.model.model,
    'gen_ai.usage.input_tokens': result.usage.inputTokens,
    'gen_ai.usage.output_tokens': result.usage.outputTokens,
    'gen_ai.response.finish_reasons': [result.finishReason],
  });
  const tokens = context.metricMeter.createCounter('turnpike_model_tokens', 'tokens', 'Model tokens used, by provider, model and direction');
  const tags = { provider: input.model.provider, model: input.model.model };
  tokens.add(result.usage.inputTokens, { ...tags, direction: 'input' });
  tokens.add(result.usage.outputTokens, { ...tags, direction: 'output' });
}

/**
 * A priced model step's cost (activities/prices.ts): a span attribute, and the cost counter in
 * micro-USD (Temporal's counters count integers), by provider and model.
 */
export function recordModelCost(context: Context, model: { provider: string; model: string }, costUsd: number): void {
  trace.getActiveSpan()?.setAttributes({ 'turnpike.model.cost_usd': costUsd });
  context.metricMeter
    .createCounter('turnpike_model_cost_microusd', 'µUSD', "Model cost from the worker's price table, in millionths of a US dollar, by provider and model")
    .add(Math.round(costUsd * 1e6), { provider: model.provider, model: model.model });
}

/** One attempt of a tool activity: `ok`, `error` (an error result the model sees) or `failed` (thrown; retried by policy). */
export function recordToolAttempt(context: Context, tool: string, toolCallId: string, result: 'ok' | 'error' | 'failed'): void {
  const attributes: Attributes = { 'turnpike.tool.name': tool, 'turnpike.tool.call_id': toolCallId, 'turnpike.tool.result': result };
  trace.getActiveSpan()?.setAttributes(attributes);
  context.metricMeter.createCounter('turnpike_tool_attempts', 'attempts', 'Tool activity attempts, by tool and result (ok, error, failed)').add(1, { tool, result });
}

/**
 * The labels of the model-capacity metrics: the tenant (the task's fairness key, which turnpike
 * sets to the turn's tenant; `none` for a turn without one) and the task queue the call ran on
 * (the model queue with `modelCapacity`, else the turns' queue).
 */
export function capacityTags(context: Context): { tenant: string; queue: string } {
  return { tenant: context.info.priority?.fairnessKey || 'none', queue: context.info.taskQueue };
}

/**
 * A model call admitted: its attempt was taken from the queue and starts now. Counts it, and how
 * long it waited in the queue (now minus when this attempt was scheduled; a retry's backoff is not
 * part of it, its attempt being scheduled at the backoff's end).
 */
export function recordModelAdmitted(context: Context): void {
  const tags = capacityTags(context);
  context.metricMeter.createCounter('turnpike_model_calls_admitted', 'calls', 'Model call attempts taken from their task queue, by tenant and queue').add(1, tags);
  const waitedMs = Math.max(0, Date.now() - context.info.currentAttemptScheduledTimestampMs);
  context.metricMeter
    .createHistogram('turnpike_model_capacity_wait_ms', 'int', 'ms', 'How long model call attempts waited in their task queue before a worker took them, by tenant and queue')
    .record(waitedMs, tags);
}

/** A model call the provider answered 429 (rate limited): retried by the activity's policy. */
export function recordModelRateLimited(context: Context): void {
  context.metricMeter.createCounter('turnpike_model_rate_limited', 'responses', "Model calls the provider refused with 429 (its rate limit), by tenant and queue").add(1, capacityTags(context));
}

/** Whether a provider call failed with HTTP 429: the SDKs' errors carry `status` (or `statusCode`), here or in a cause. */
export function isRateLimitedError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const { status, statusCode, cause } = current as { status?: unknown; statusCode?: unknown; cause?: unknown };
    if (status === 429 || statusCode === 429) return true;
    current = cause;
  }
  return false;
}
