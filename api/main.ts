/**
 * `npm run api`: the HTTP API and approval dashboard against the cluster the environment
 * names. TURNPIKE_API_TOKENS="token:identity,..." (required), TURNPIKE_API_PORT (default 3000),
 * TURNPIKE_DECISION_SECRET (optional: require signed decision tokens), TEMPORAL_UI_URL (links).
 */
import { TurnpikeClient } from '../client/turnpike-client.js';
import { parseTokenMap } from './auth.js';
import { buildApi } from './server.js';

async function main(): Promise<void> {
  const tokens = parseTokenMap(process.env.TURNPIKE_API_TOKENS);
  if (tokens.size === 0) {
    console.error('Set TURNPIKE_API_TOKENS="<token>:<identity>,..." so decisions carry who made them.');
    process.exit(2);
  }
  const client = await TurnpikeClient.connect();
  const api = await buildApi({
    client,
    tokens,
    decisionSecret: process.env.TURNPIKE_DECISION_SECRET,
    temporalUiUrl: process.env.TEMPORAL_UI_URL,
    namespace: client.client.options.namespace,
    logger: true,
  });
  const port = Number(process.env.TURNPIKE_API_PORT ?? 3000);
  await api.listen({ host: process.env.TURNPIKE_API_HOST ?? '127.0.0.1', port });
  const shutdown = async () => {
    await api.close();
    await client.close();
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
