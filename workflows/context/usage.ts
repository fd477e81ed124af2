/** Token usage summed over a turn's model steps. */
import type { Usage } from '../types/index.js';

/**
 * Adds one step's usage to the turn's total, in place. The optional counts appear in the total
 * only once a step has reported them, so a provider that never reports cached or reasoning
 * tokens yields a result without them rather than a misleading 0.
 */
export function addUsage(total: Usage, step: Usage): void {
  total.inputTokens += step.inputTokens;
  total.outputTokens += step.outputTokens;
  if (step.cachedInputTokens !== undefined) total.cachedInputTokens = (total.cachedInputTokens ?? 0) + step.cachedInputTokens;
  if (step.cacheWriteInputTokens !== undefined) total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + step.cacheWriteInputTokens;
  if (step.reasoningTokens !== undefined) total.reasoningTokens = (total.reasoningTokens ?? 0) + step.reasoningTokens;
  if (step.webSearchRequests !== undefined) total.webSearchRequests = (total.webSearchRequests ?? 0) + step.webSearchRequests;
  if (step.webFetchRequests !== undefined) total.webFetchRequests = (total.webFetchRequests ?? 0) + step.webFetchRequests;
  if (step.fileSearchRequests !== undefined) total.fileSearchRequests = (total.fileSearchRequests ?? 0) + step.fileSearchRequests;
  if (step.codeInterpreterContainers !== undefined) total.codeInterpreterContainers = (total.codeInterpreterContainers ?? 0) + step.codeInterpreterContainers;
  // USD of the steps the worker priced, kept to a millionth of a cent as each step's is.
  if (step.costUsd !== undefined) total.costUsd = Math.round(((total.costUsd ?? 0) + step.costUsd) * 1e8) / 1e8;
}
