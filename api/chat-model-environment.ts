/**
 * The model of the conversations `POST /api/chat` starts when a request names none, as `npm run
 * api` (api/main.ts) reads it: `TURNPIKE_PROVIDER` and `TURNPIKE_MODEL`, the names the CLI and
 * `npm start` read. Unset, `buildApi` keeps its default (the scripted demo model).
 */
import { MODEL_PROVIDERS } from '../workflows/messages/model-providers.js';
import type { ModelProvider, ModelSettings } from '../workflows/types/index.js';

export function chatModelFromEnvironment(env: NodeJS.ProcessEnv = process.env): ModelSettings | undefined {
  const { TURNPIKE_PROVIDER: provider, TURNPIKE_MODEL: model } = env;
  if (!provider && !model) return undefined;
  if (!provider || !model) throw new Error('Set both TURNPIKE_PROVIDER and TURNPIKE_MODEL for the model /api/chat starts conversations on');
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider)) throw new Error(`TURNPIKE_PROVIDER must be one of ${MODEL_PROVIDERS.join(', ')} (got ${provider})`);
  return { provider: provider as ModelProvider, model };
}
