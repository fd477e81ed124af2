/** Every model provider a turn may name, as the update and HTTP request checks accept them. */
import type { ModelProvider } from '../types/index.js';

export const MODEL_PROVIDERS = ['openai', 'openai-responses', 'anthropic', 'ai-sdk', 'scripted', 'anthropic-bedrock', 'anthropic-vertex', 'azure-openai', 'azure-openai-responses'] as const satisfies readonly ModelProvider[];

// Compile-time check: the list names every provider of the type.
type Missing = Exclude<ModelProvider, (typeof MODEL_PROVIDERS)[number]>;
export const ALL_PROVIDERS_LISTED: Missing extends never ? true : Missing = true;
