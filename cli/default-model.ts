import type { ModelSettings } from '../workflows/types/index.js';

const DEFAULT_MODELS = { openai: 'gpt-4.1-mini', 'openai-responses': 'gpt-5-mini', anthropic: 'claude-sonnet-4-6', scripted: 'demo' } as const;

/**
 * The model a turn uses when none is named (the CLI's default and `npm start`'s demo turn): `TURNPIKE_PROVIDER` / `TURNPIKE_MODEL` when set, else
 * OpenAI when its key is set, else Anthropic when its key is set, else the scripted demo model.
 */
export function modelFromEnvironment(env: NodeJS.ProcessEnv = process.env): ModelSettings {
  const provider = env.TURNPIKE_PROVIDER ?? (env.OPENAI_API_KEY ? 'openai' : env.ANTHROPIC_API_KEY ? 'anthropic' : 'scripted');
  if (!Object.hasOwn(DEFAULT_MODELS, provider)) {
    throw new Error(`TURNPIKE_PROVIDER must be openai, openai-responses, anthropic or scripted (got ${provider})`);
  }
  const known = provider as keyof typeof DEFAULT_MODELS;
  return { provider: known, model: env.TURNPIKE_MODEL ?? DEFAULT_MODELS[known] };
}
