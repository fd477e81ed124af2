/**
 * `npm run api`: the HTTP API and approval dashboard against the cluster the environment
 * names. Callers: TURNPIKE_OIDC_* (JWTs from an identity provider) and/or TURNPIKE_API_TOKENS="token:identity,...";
 * the dashboard signs in with TURNPIKE_LOGIN_* (OpenID Connect code flow; TURNPIKE_SESSION_SECRET encrypts its cookie);
 * TURNPIKE_API_PORT (default 3000),
 * TURNPIKE_DECISION_SECRET (optional: require signed decision tokens), TURNPIKE_STREAM_SECRET (stream
 * tokens; set one for every instance behind a load balancer), TEMPORAL_UI_URL (links); SLACK_SIGNING_SECRET
 * and SLACK_BOT_TOKEN with TURNPIKE_SLACK_USERS or TURNPIKE_SLACK_USERS_BY_EMAIL (decisions from Slack);
 * TURNPIKE_LIVE_POSTGRES_URL (the workers' live channel: event streams and /api/chat show deltas as the model writes them);
 * TURNPIKE_PROVIDER and TURNPIKE_MODEL (the model of the conversations /api/chat starts when a request names none).
 * TURNPIKE_API_TENANTS="identity:tenant,..." and TURNPIKE_OIDC_TENANT_CLAIM (the tenant a caller is bound to),
 * TURNPIKE_TENANT_WEIGHTS="tenant:weight,..." (fairness weights; docs/tenants-and-capacity.md).
 * TURNPIKE_A2A_AGENTS (JSON: agent name → { description, model, system?, tools? }) and TURNPIKE_A2A_PUBLIC_URL: agents served over A2A;
 * TURNPIKE_MCP_AGENTS (the same JSON): agents served as MCP tools with Tasks at /api/mcp (docs/protocols.md).
 */
import { liveDeltasFromEnvironment } from '../activities/postgres-live/postgres-live-deltas.js';
import { TurnpikeClient } from '../client/turnpike-client.js';
import { oidcOptionsFromEnvironment, parseTenantMap, parseTokenMap } from './auth.js';
import { parseTenantWeights } from '../client/tenants.js';
import { loginOptionsFromEnvironment } from './login.js';
import { chatModelFromEnvironment } from './chat-model-environment.js';
import { a2aOptionsFromEnvironment } from './a2a/a2a-agents.js';
import { mcpOptionsFromEnvironment } from './mcp/mcp-agents.js';
import { buildApi } from './server.js';
import { slackInteractionOptionsFromEnvironment } from './slack/slack-environment.js';

async function main(): Promise<void> {
  const tokens = parseTokenMap(process.env.TURNPIKE_API_TOKENS);
  const oidc = oidcOptionsFromEnvironment();
  const login = loginOptionsFromEnvironment();
  const chatModel = chatModelFromEnvironment();
  const a2a = a2aOptionsFromEnvironment();
  const mcp = mcpOptionsFromEnvironment();
  if (tokens.size === 0 && !oidc && !login) {
    console.error('Set TURNPIKE_LOGIN_ISSUER, TURNPIKE_LOGIN_CLIENT_ID and TURNPIKE_LOGIN_REDIRECT_URI (sign in with your identity provider), TURNPIKE_OIDC_JWKS_URL, TURNPIKE_OIDC_ISSUER and TURNPIKE_OIDC_AUDIENCE (tokens from your identity provider), or TURNPIKE_API_TOKENS="<token>:<identity>,..." (development), so decisions carry who made them.');
    process.exit(2);
  }
  // The workers' live channel, listening from the start; the API serves without it (readers follow
  // the durable stream) while its database is down, so nothing waits for it here.
  const liveDeltas = liveDeltasFromEnvironment();
  void liveDeltas?.ready();
  const tenantWeights = parseTenantWeights(process.env.TURNPIKE_TENANT_WEIGHTS);
  const client = await TurnpikeClient.connect({ ...(liveDeltas ? { liveDeltas } : {}), tenantWeights });
  const api = await buildApi({
    client,
    tokens,
    tenants: parseTenantMap(process.env.TURNPIKE_API_TENANTS),
    ...(oidc ? { oidc } : {}),
    ...(login ? { login } : {}),
    ...(process.env.TURNPIKE_SESSION_SECRET ? { sessionSecret: process.env.TURNPIKE_SESSION_SECRET } : {}),
    decisionSecret: process.env.TURNPIKE_DECISION_SECRET,
    ...(process.env.TURNPIKE_STREAM_SECRET ? { streamSecret: process.env.TURNPIKE_STREAM_SECRET } : {}),
    temporalUiUrl: process.env.TEMPORAL_UI_URL,
    namespace: client.client.options.namespace,
    slack: slackInteractionOptionsFromEnvironment(),
    ...(chatModel ? { chatModel } : {}),
    ...(a2a ? { a2a } : {}),
    ...(mcp ? { mcp } : {}),
    logger: true,
  });
  const port = Number(process.env.TURNPIKE_API_PORT ?? 3000);
  await api.listen({ host: process.env.TURNPIKE_API_HOST ?? '127.0.0.1', port });
  const shutdown = async () => {
    await api.close();
    await client.close();
    await liveDeltas?.close();
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
