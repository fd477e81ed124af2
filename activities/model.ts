/** One model step, routed to the provider the turn names. */
import { ApplicationFailure } from '@temporalio/common';
import { scriptedModelStep } from './providers/scripted.js';
import type { ModelProvider, ModelStepInput, ModelStepResult } from '../workflows/types.js';

type ProviderCall = (input: ModelStepInput) => Promise<ModelStepResult>;

const providers: Record<ModelProvider, ProviderCall> = {
  scripted: async (input) => scriptedModelStep(input),
  openai: async () => {
    throw ApplicationFailure.nonRetryable('openai provider is not wired in yet', 'ProviderUnavailable');
  },
  anthropic: async () => {
    throw ApplicationFailure.nonRetryable('anthropic provider is not wired in yet', 'ProviderUnavailable');
  },
};

export async function callModel(input: ModelStepInput): Promise<ModelStepResult> {
  const provider = providers[input.model.provider];
  if (!provider) {
    throw ApplicationFailure.nonRetryable(
      `Unknown model provider "${String(input.model.provider)}"; expected one of ${Object.keys(providers).join(', ')}`,
      'InvalidModelSettings',
    );
  }
  return provider(input);
}
