/**
 * The tokens-per-minute limit around one model call, inside the `callModel` activity of the model
 * queue's Worker (`modelCapacity.tokenLimit`): the call books the tokens it is expected to use in
 * the counter the fleet shares (token-counter.ts), waits in this process until its booking's time,
 * calls the provider, and settles the booking to the tokens the provider reported.
 *
 * The wait holds one of the model Worker's slots (`maxConcurrentCalls`), so at most that many calls
 * per process wait here; the others wait in the task queue, where priority and fairness apply. A
 * booking further away than `maxWaitSeconds` is released and the attempt is retried when it would
 * have been due (`ModelTokensBusy`, with `nextRetryDelay`): a wait never runs into the step's
 * start-to-close timeout. No Temporal action per call that waits here; one per such retry.
 */
import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { capacityTags } from '../telemetry.js';
import type { ModelTokenCounter } from './token-counter.js';

export interface ModelTokenLimit {
  /** Tokens a minute the fleet may send to the models of this queue (input and output). */
  tokensPerMinute: number;
  /**
   * The limit is held pro rata over any window of this many seconds (a provider may enforce a
   * per-minute limit over shorter periods). Default 60.
   */
  windowSeconds?: number;
  /** Where the fleet counts: `PostgresModelTokenCounter` for more than one process. */
  counter: ModelTokenCounter;
  /** Output tokens expected of a step whose model settings set no `maxTokens`. Default 1,000. */
  outputTokens?: number;
  /** Longest wait in this process for a booking; a later one is retried when due. Default 60. */
  maxWaitSeconds?: number;
  /** Tokens a call is expected to use, e.g. from the model's own tokenizer. Default {@link expectedTokens} with `outputTokens`. */
  estimate?: (input: ModelStepInput) => number;
  /**
   * The share of the limit, from 0 to 0.5, kept for the calls of `interactive` turns (priority key
   * 1), so that they need not wait behind every booking a batch has made (token-counter.ts). Other
   * calls may use the rest only: while no interactive call uses the share, it goes unused. Default 0.
   */
  interactiveShare?: number;
}

/** The `priorityKey` of turnpike's `interactive` turns (client/tenants.ts), which their model calls inherit. */
const INTERACTIVE_PRIORITY_KEY = 1;

/** What an image is expected to cost: about Anthropic's largest (1,568 px a side), above OpenAI's high detail at 1,024². */
export const IMAGE_TOKENS = 1_600;

/**
 * Tokens a call is expected to use: its request's characters ÷ 4 (system, messages and tools, as
 * JSON; a PDF's base64 too, which overcounts it), each image as {@link IMAGE_TOKENS}, plus its
 * `maxTokens`, or `outputTokens` without one.
 */
export function expectedTokens(input: ModelStepInput, outputTokens: number): number {
  let images = 0;
  const characters = JSON.stringify([input.system ?? '', input.messages, input.tools], (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'image' && 'source' in value) {
      images++;
      return undefined;
    }
    return value;
  }).length;
  return Math.ceil(characters / 4) + images * IMAGE_TOKENS + (input.model.maxTokens ?? outputTokens);
}

/** The options checked: a bad one throws a clear TypeError naming it, before anything polls. */
export function checkedModelTokenLimit(limit: ModelTokenLimit): Required<Omit<ModelTokenLimit, 'estimate'>> & Pick<ModelTokenLimit, 'estimate'> {
  const invalid = (field: string, must: string, value: unknown) => new TypeError(`Invalid modelCapacity.tokenLimit.${field}: ${must} (got ${String(value)})`);
  if (limit === null || typeof limit !== 'object') throw new TypeError('Invalid modelCapacity.tokenLimit: expected { tokensPerMinute, counter, windowSeconds?, outputTokens?, maxWaitSeconds? }');
  const { tokensPerMinute, windowSeconds = 60, counter, outputTokens = 1_000, maxWaitSeconds = 60, estimate, interactiveShare = 0 } = limit;
  if (!(Number.isInteger(tokensPerMinute) && tokensPerMinute >= 1)) throw invalid('tokensPerMinute', 'must be a whole number of at least 1', tokensPerMinute);
  if (!(typeof windowSeconds === 'number' && Number.isFinite(windowSeconds) && windowSeconds >= 1 && windowSeconds <= 3_600)) throw invalid('windowSeconds', 'must be a number of seconds from 1 to 3600', windowSeconds);
  if (!(Number.isInteger(outputTokens) && outputTokens >= 0)) throw invalid('outputTokens', 'must be a whole number of at least 0', outputTokens);
  if (!(typeof maxWaitSeconds === 'number' && Number.isFinite(maxWaitSeconds) && maxWaitSeconds >= 0 && maxWaitSeconds <= 240)) throw invalid('maxWaitSeconds', 'must be a number of seconds from 0 to 240 (the model step has 5 minutes to run)', maxWaitSeconds);
  if (!counter || typeof counter.book !== 'function' || typeof counter.settle !== 'function') {
    throw new TypeError('Invalid modelCapacity.tokenLimit.counter: expected a ModelTokenCounter (PostgresModelTokenCounter, or InMemoryModelTokenCounter for one process)');
  }
  if (estimate !== undefined && typeof estimate !== 'function') throw invalid('estimate', 'must be a function of the model step input', estimate);
  if (!(typeof interactiveShare === 'number' && interactiveShare >= 0 && interactiveShare <= 0.5)) throw invalid('interactiveShare', 'must be a number from 0 to 0.5', interactiveShare);
  if (Math.floor((tokensPerMinute * windowSeconds) / 60) < 1) throw invalid('tokensPerMinute', `allows no whole token in a window of ${windowSeconds} s`, tokensPerMinute);
  return { tokensPerMinute, windowSeconds, counter, outputTokens, maxWaitSeconds, interactiveShare, ...(estimate ? { estimate } : {}) };
}

export class ModelTokenGate {
  private readonly limit: ReturnType<typeof checkedModelTokenLimit>;

  constructor(limit: ModelTokenLimit) {
    this.limit = checkedModelTokenLimit(limit);
  }

  /** Runs `call` once its booking is due; settles the booking to the call's usage. */
  async around(context: Context, input: ModelStepInput, call: (input: ModelStepInput) => Promise<ModelStepResult>): Promise<ModelStepResult> {
    const { tokensPerMinute, windowSeconds, counter, outputTokens, maxWaitSeconds, estimate, interactiveShare } = this.limit;
    const { workflowExecution, activityId, attempt, taskQueue, priority } = context.info;
    const key = taskQueue;
    const id = `${workflowExecution?.workflowId ?? '-'}/${workflowExecution?.runId ?? '-'}/${activityId}/${attempt}`;
    const expected = estimate ? estimate(input) : expectedTokens(input, outputTokens);
    if (!(Number.isFinite(expected) && expected >= 0)) throw ApplicationFailure.nonRetryable(`modelCapacity.tokenLimit.estimate gave ${String(expected)} tokens; expected a number of at least 0`, 'InvalidModelSettings');
    const tokens = Math.ceil(expected);
    const limit = Math.floor((tokensPerMinute * windowSeconds) / 60);
    let waitMs: number;
    try {
      const reserved = Math.floor(limit * interactiveShare);
      const interactive = priority?.priorityKey === INTERACTIVE_PRIORITY_KEY;
      ({ waitMs } = await counter.book({ key, id, tokens, limit, windowMs: windowSeconds * 1_000, ...(reserved > 0 ? { reserved, interactive } : {}) }));
    } catch (error) {
      if (error instanceof RangeError) throw ApplicationFailure.nonRetryable(`Model call too large for the token limit of queue "${key}": ${error.message}`, 'ModelTokensTooLarge');
      throw error;
    }
    context.metricMeter
      .createHistogram('turnpike_model_token_wait_ms', 'int', 'ms', "How long model calls waited for their booking under the fleet's tokens-per-minute limit, by tenant and queue")
      .record(Math.max(0, Math.round(waitMs)), capacityTags(context));
    let called = false;
    try {
      if (waitMs > maxWaitSeconds * 1_000) {
        throw ApplicationFailure.create({
          message: `The token limit of queue "${key}" has no room for ${tokens} tokens for ${Math.ceil(waitMs / 1_000)} s; retried then`,
          type: 'ModelTokensBusy',
          nextRetryDelay: Math.ceil(waitMs),
        });
      }
      if (waitMs > 0) await context.sleep(waitMs);
      called = true;
      const result = await call(input);
      // Not settled: the booking keeps what was expected, and the answer is not lost for it.
      await counter.settle(key, id, result.usage.inputTokens + result.usage.outputTokens).catch((error: unknown) => {
        context.log.warn('could not settle a model call in the token counter', { counter: counter.description, error: String(error) });
      });
      return result;
    } catch (error) {
      // A call that never reached the provider gives its booking back; one that did keeps what it expected.
      if (!called) await counter.settle(key, id, 0).catch(() => {});
      throw error;
    }
  }
}
