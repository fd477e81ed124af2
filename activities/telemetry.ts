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
