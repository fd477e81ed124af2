/**
 * Which wire format each provider speaks: the clouds speak their first-party API's, so they take
 * its options and carry its reasoning. Used by the checks of a turn's model settings and its
 * typed output, and by the activities that translate a step.
 */
import type { ModelProvider } from './model.js';

/** The providers of Claude through Anthropic's Messages API: Anthropic's own, Bedrock and Vertex AI. */
export function speaksAnthropic(provider: string): provider is Extract<ModelProvider, 'anthropic' | 'anthropic-bedrock' | 'anthropic-vertex'> {
  return provider === 'anthropic' || provider === 'anthropic-bedrock' || provider === 'anthropic-vertex';
}

/** The providers of OpenAI's wire formats: Chat Completions, the Responses API and Azure OpenAI. */
export function speaksOpenAI(provider: string): provider is Extract<ModelProvider, 'openai' | 'openai-responses' | 'azure-openai' | 'azure-openai-responses'> {
  return provider === 'openai' || provider === 'openai-responses' || provider === 'azure-openai' || provider === 'azure-openai-responses';
}

/** The providers of OpenAI's Responses API: OpenAI's own and Azure OpenAI's. */
export function speaksResponses(provider: string): provider is Extract<ModelProvider, 'openai-responses' | 'azure-openai-responses'> {
  return provider === 'openai-responses' || provider === 'azure-openai-responses';
}

/** The providers whose settings the worker holds by name (`clouds`), chosen by `model.endpoint`. */
export function isCloudProvider(provider: string): provider is Extract<ModelProvider, 'anthropic-bedrock' | 'anthropic-vertex' | 'azure-openai' | 'azure-openai-responses'> {
  return provider === 'anthropic-bedrock' || provider === 'anthropic-vertex' || provider === 'azure-openai' || provider === 'azure-openai-responses';
}
