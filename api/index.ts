/**
 * `turnpike/api`: the HTTP API and approval dashboard as a fastify instance, to listen on its
 * own or to mount in your server (`app.register(async (scope) => ...)` or a reverse proxy).
 *
 *   const api = await buildApi({ client: turnpike, tokens: parseTokenMap(process.env.TURNPIKE_API_TOKENS) });
 *   await api.listen({ port: 3000 });
 */
export { buildApi, type ApiOptions } from './server.js';
export { MCP_PATH, DEFAULT_PLAIN_CALL_TIMEOUT_MS, DEFAULT_TASK_POLL_INTERVAL_MS, type McpAgent, type McpOptions } from './mcp/mcp-agents.js';
/** The typed answer of `McpAgent.output` (the same type as `turnpike/client`'s). */
export type { OutputOption } from '../client/typed-output.js';
export type { JsonSchema } from '../workflows/types/index.js';
export { anyOf, callerFromClaims, oidcAuthenticator, oidcOptionsFromEnvironment, parseTenantMap, parseTokenMap, staticTokenAuthenticator, type Authenticator, type Caller, type OidcOptions } from './auth.js';
export { loginOptionsFromEnvironment, type LoginOptions } from './login.js';
export { DEFAULT_SESSION_MAX_AGE_SECONDS } from './session.js';
export { buildCodecServer, type CodecServerOptions } from './codec-server.js';
export { STREAM_TOKEN_TTL_SECONDS, StreamTokens, type StreamScope, type StreamTokenClaims } from './stream-token.js';
/** The model settings of `ApiOptions.chatModel` (the same type as `turnpike`'s). */
export type { ModelSettings } from '../workflows/types/index.js';
export { SLACK_INTERACTIONS_PATH, type SlackInteractionOptions } from './slack/interactions-route.js';
export { SLACK_USER_CACHE_MS, type SlackEmailMapping, type SlackIdentity, type SlackUserMapping } from './slack/slack-users.js';
export { slackInteractionOptionsFromEnvironment } from './slack/slack-environment.js';
export { A2A_BASE_PATH, type A2aAgent, type A2aOptions } from './a2a/a2a-agents.js';
export { A2A_PUSH_JWKS_PATH, A2A_PUSH_JWT_EXTENSION } from './a2a/a2a-push-jwks.js';
export type { A2aPushJwk } from '../activities/a2a-push/push-jwt-key.js';
export type { PublishedAgent } from './published-agents.js';
