/**
 * turnpike's HTTP API, for dashboards and backends not written in TypeScript, and the
 * approval dashboard page. Built on fastify with zod request validation:
 *
 *   malformed body or parameters  → 400
 *   no or unknown bearer token    → 401
 *   unknown turn, approval or call → 404
 *   a decision or result the turn rejects (already decided, expired, not allowed...) → 409
 * Each error body is `{ error: { type, message } }`; every type and its status is in
 * `REJECTION_TYPES` (workflows/messages/rejection-types.ts).
 *
 * The approver of a decision is the identity of the request's bearer token or sign-in session
 * (api/session.ts, api/login.ts), never the body.
 */
import { MAX_STORED_PART_BYTES } from '../workflows/turn/binary-parts.js';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TurnpikeClient } from '../client/turnpike-client.js';
import type { ModelSettings } from '../workflows/types/index.js';
import { ApprovalsFeeds, DEFAULT_FEED_INTERVAL_MS } from './approvals-feed.js';
import { registerApprovalsEventsRoute } from './approvals-events-route.js';
import { registerEventStreamRoutes } from './event-stream-routes.js';
import { registerUiChatRoute } from './ui-chat-route.js';
import { StreamTokens } from './stream-token.js';
import { ReadAccess, type ReadAccessOptions } from './read-access.js';
import { registerSessions } from './session.js';
import { registerSessionRoutes, type LoginOptions } from './login.js';
import { anyOf, oidcAuthenticator, staticTokenAuthenticator, type Authenticator, type Caller, type OidcOptions } from './auth.js';
import { conversationNotFound, sendError, sendUnavailable, turnNotFound } from './replies.js';
import { TurnpikeUnavailableError } from '../client/errors.js';
import { ParkedListing } from './parked-listing.js';
import { caller, type RouteContext } from './route-context.js';
import { tenantBinder, tenantFilterProblem } from './tenant-binding.js';
import { registerDashboardFiles } from './dashboard-files.js';
import { checkMcpOptions, type McpOptions } from './mcp/mcp-agents.js';
import { registerTurnRoutes } from './turn-routes.js';
import { registerDecisionRoutes } from './decision-routes.js';
import { registerApprovalRoutes } from './approval-routes.js';
import { registerConversationRoutes } from './conversation-routes.js';
import { registerBranchRoutes } from './branch-routes.js';
import { registerEvaluationRoutes } from './evaluation-routes.js';
import { registerSlackInteractions, SLACK_INTERACTIONS_PATH, type SlackInteractionOptions } from './slack/interactions-route.js';
import { A2A_BASE_PATH, checkA2aOptions, type A2aOptions } from './a2a/a2a-agents.js';
import { A2A_PUSH_JWKS_PATH } from './a2a/a2a-push-jwks.js';
import { importOptional } from '../peers/optional-packages.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of an /api/ route (set by the authentication hook). */
    caller?: Caller;
  }
}

export interface ApiOptions {
  client: TurnpikeClient;
  /** Static bearer token → approver identity (development, service accounts). */
  tokens?: Map<string, string>;
  /** JWT bearer tokens from the organisation's identity provider. */
  oidc?: OidcOptions;
  /**
   * Signing in to the dashboard with the identity provider (OpenID Connect code flow with PKCE);
   * the session is an encrypted httpOnly cookie (api/session.ts).
   */
  login?: LoginOptions;
  /** Encrypts session cookies (at least 32 characters; `TURNPIKE_SESSION_SECRET`); the same on every instance. Random per process when omitted. */
  sessionSecret?: string;
  /** Any other way to authenticate; tried after `tokens` and `oidc`. */
  authenticate?: Authenticator;
  /**
   * Identity → the tenant it is bound to (`TURNPIKE_API_TENANTS`), for callers whose token or
   * sign-in names none by a claim (`tenantClaim`). A bound caller's turns run for its tenant and
   * it sees only that tenant's; see docs/http-api.md, "Tenants".
   */
  tenants?: ReadonlyMap<string, string>;
  /** Parked turns a listing reads at most. Default 5,000. */
  listingLimit?: number;
  /**
   * Signs the stream tokens an `EventSource` opens an event stream with (at least 32
   * characters; `TURNPIKE_STREAM_SECRET`). Set the same one on every API instance behind a load
   * balancer; when omitted, each process makes a random one.
   */
  streamSecret?: string;
  /**
   * How often the dashboards' live feed (`GET /api/approvals/events`) lists parked calls while
   * any dashboard is open: one listing for all of them. Default 2,000 ms.
   */
  approvalsFeedIntervalMs?: number;
  /** When set, every decision must carry the signed token the approval was listed with. */
  decisionSecret?: string;
  /** Who reads everything (see api/read-access.ts); default from `TURNPIKE_ADMIN_GROUPS` and `TURNPIKE_ADMINS`. */
  access?: ReadAccessOptions;
  /** Shown by the dashboard as links, e.g. http://127.0.0.1:8233. */
  temporalUiUrl?: string;
  namespace?: string;
  logger?: boolean;
  /** The model of the conversations `POST /api/chat` starts when its request names none (default: the scripted demo). */
  chatModel?: ModelSettings;
  /**
   * Named agents served as MCP tools with Tasks at `/api/mcp` (Streamable HTTP, stateless): a
   * task is a turn (docs/protocols.md). Needs `@modelcontextprotocol/sdk`.
   */
  mcp?: McpOptions;
  /**
   * Decisions from Slack: `POST /api/slack/interactions` takes the Approve, Deny and "Deny with
   * reason" buttons of approval messages, signed with the app's signing secret, as the mapped
   * Slack user (docs/http-api.md, *Slack*). Needs `@slack/web-api`.
   */
  slack?: SlackInteractionOptions;
  /**
   * Named agents served over A2A (docs/protocols.md): each agent's Agent Card at
   * `/api/a2a/<name>/.well-known/agent-card.json` and JSON-RPC at `/api/a2a/<name>`, where an A2A
   * task is a turn. Needs `@a2a-js/sdk`.
   */
  a2a?: A2aOptions;
}

/**
 * The largest request body the API reads: one image or document of the largest size the content
 * store takes, base64-encoded, and the rest of the request. Parts of 128 KiB or more are stored
 * by the client before the turn starts; only their references reach workflow history.
 */
const API_BODY_LIMIT_BYTES = Math.ceil((MAX_STORED_PART_BYTES * 4) / 3) + 2 * 1024 * 1024;

export async function buildApi(options: ApiOptions): Promise<FastifyInstance> {
  // 2 MiB rather than fastify's 1 MiB: a turn may carry inline images and documents up to the
  // limits the workflow enforces (1.5 million base64 characters together; workflows/turn/binary-parts.ts).
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: API_BODY_LIMIT_BYTES }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.setErrorHandler((error: { validation?: unknown; statusCode?: number; message: string }, _request, reply) => {
    if (error.validation || error.statusCode === 400) return sendError(reply, 'InvalidRequest', error.message);
    if (error.statusCode === 415 || error.statusCode === 413) return sendError(reply, 'InvalidRequest', error.message, error.statusCode);
    if (error instanceof TurnpikeUnavailableError) {
      app.log.warn(error);
      return sendUnavailable(reply, error);
    }
    app.log.error(error);
    return sendError(reply, 'InternalError', 'turnpike could not complete the request');
  });

  const authenticators = [
    ...(options.tokens && options.tokens.size > 0 ? [staticTokenAuthenticator(options.tokens)] : []),
    ...(options.oidc ? [oidcAuthenticator(options.oidc)] : []),
    ...(options.authenticate ? [options.authenticate] : []),
  ];
  if (options.a2a) checkA2aOptions(options.a2a);
  if (authenticators.length === 0 && !options.login) throw new Error('buildApi needs tokens, oidc, login or authenticate: decisions must carry who made them');
  // A caller's tenant: its claim's, else the operator's table's (api/tenant-binding.ts).
  const bind = tenantBinder(options.tenants);
  const authenticate: Authenticator = async (authorization) => bind(await anyOf(...authenticators)(authorization));
  const sessions = await registerSessions(app, { ...(options.sessionSecret ? { secret: options.sessionSecret } : {}), ...(options.login?.sessionMaxAge ? { maxAgeSeconds: options.login.sessionMaxAge } : {}) });
  await registerSessionRoutes(app, { sessions, authenticate, ...(options.login ? { login: options.login } : {}) });

  // Every /api/ route but the public configuration needs a caller; the page and its files do not.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/') || request.url.startsWith('/api/config')) return;
    // Slack's interactions are signed by Slack (api/slack/signature.ts), not by a caller.
    if (request.url.split('?')[0] === SLACK_INTERACTIONS_PATH) return;
    // An A2A Agent Card is public, as discovery is; its JSON-RPC route needs a caller.
    if (request.url.startsWith(`${A2A_BASE_PATH}/`) && request.url.split('?')[0]!.endsWith('/.well-known/agent-card.json')) return;
    // So are the public keys of its push notifications' JWTs.
    if (request.url.split('?')[0] === A2A_PUSH_JWKS_PATH) return;
    // Event streams check a bearer token or their own stream token (EventSource sends no headers).
    if (/^\/api\/(turns|conversations)\/[^/]+\/events(\?|$)/.test(request.url) || /^\/api\/approvals\/events(\?|$)/.test(request.url)) return;
    if (request.headers.authorization) {
      request.caller = await authenticate(request.headers.authorization);
      if (!request.caller) return sendError(reply, 'Unauthorized', 'Send Authorization: Bearer <token> with a token this server accepts');
      return;
    }
    // The dashboard's sign-in session; what it changes must carry the session's CSRF token.
    const signedIn = sessions.caller(request);
    if (!signedIn) return sendError(reply, 'Unauthorized', 'Sign in, or send Authorization: Bearer <token> with a token this server accepts');
    if (!sessions.csrfOk(request)) return sendError(reply, 'InvalidCsrfToken', 'A signed-in request that changes something needs the x-csrf-token header of this session (GET /api/me)');
    request.caller = bind({ identity: signedIn.identity, groups: signedIn.groups, ...(signedIn.tenant !== undefined ? { tenant: signedIn.tenant } : {}) });
  });

  registerDashboardFiles(app);

  const access = new ReadAccess(options.client, options.access);
  const listing = new ParkedListing(options.client, access, { ...(options.listingLimit !== undefined ? { listingLimit: options.listingLimit } : {}), ...(options.decisionSecret ? { decisionSecret: options.decisionSecret } : {}) });
  const feed = new ApprovalsFeeds(listing.parkedCalls, options.approvalsFeedIntervalMs ?? DEFAULT_FEED_INTERVAL_MS);
  listing.onChange = () => feed.nudge();

  app.get('/api/config', async () => ({ temporalUiUrl: options.temporalUiUrl ?? null, namespace: options.namespace ?? 'default', signedDecisions: Boolean(options.decisionSecret), login: Boolean(options.login) }));

  app.get('/api/me', async (request) => {
    // A signed-in page also learns its CSRF token and when the session ends; a bearer caller needs neither.
    const signedIn = request.headers.authorization ? undefined : sessions.caller(request);
    const session = signedIn ? { csrfToken: sessions.csrfToken(request), expiresAt: new Date(signedIn.expiresAt).toISOString() } : {};
    const tenant = request.caller!.tenant;
    return { identity: caller(request), groups: request.caller!.groups, ...(tenant !== undefined ? { tenant } : {}), ...session };
  });

  const routes: RouteContext = { client: options.client, access, listing, ...(options.decisionSecret ? { decisionSecret: options.decisionSecret } : {}) };
  registerTurnRoutes(app, routes);
  registerDecisionRoutes(app, routes);
  registerApprovalRoutes(app, routes);
  registerConversationRoutes(app, routes);
  registerBranchRoutes(app, routes);
  registerEvaluationRoutes(app, routes);
  if (options.slack) await registerSlackInteractions(app, routes, options.slack, bind);
  if (options.a2a) {
    const { registerA2aRoutes } = await importOptional('Serving agents over A2A (buildApi `a2a`)', ['@a2a-js/sdk'], () => import('./a2a/a2a-routes.js'));
    registerA2aRoutes(app, routes, options.a2a);
  }

  const streamTokens = new StreamTokens(options.streamSecret);
  registerEventStreamRoutes(app, {
    client: options.client,
    authenticate,
    tokens: streamTokens,
    signedIn: (request) => bind(sessions.caller(request)),
    mayRead: async (who, scope, target) => (scope === 'turn' ? access.mayReadTurn(who, target) : (await access.mayReadConversation(who, target)) === true),
    notFound: (reply, scope, target) => (scope === 'turn' ? turnNotFound(reply, target) : conversationNotFound(reply, target)),
    unauthorized: (reply) => sendError(reply, 'Unauthorized', 'Open the stream with a stream token for it (POST …/stream-token) or Authorization: Bearer <token>'),
    invalid: (reply, message) => sendError(reply, 'InvalidRequest', message),
  });
  registerApprovalsEventsRoute(app, {
    feed,
    authenticate,
    tokens: streamTokens,
    signedIn: (request) => bind(sessions.caller(request)),
    view: (calls, who, keep) => listing.viewFor(listing.narrowed(calls, keep), who),
    tenantProblem: (who, tenant) => tenantFilterProblem(who, access.isAdmin(who), tenant),
    invalid: (reply, message) => sendError(reply, 'InvalidRequest', message),
    unauthorized: (reply) => sendError(reply, 'Unauthorized', 'Open the stream with a stream token (POST /api/approvals/stream-token) or Authorization: Bearer <token>'),
  });
  registerUiChatRoute(app, {
    client: options.client,
    ...(options.chatModel ? { model: options.chatModel } : {}),
    mayRead: (who, conversationId) => access.mayReadConversation(who, conversationId),
    notFound: (reply, conversationId) => conversationNotFound(reply, conversationId),
    rejected: (reply, error) => sendError(reply, error.type, error.message),
    invalid: (reply, message) => sendError(reply, 'InvalidRequest', message),
  });

  if (options.mcp) {
    checkMcpOptions(options.mcp);
    const { registerMcpRoute } = await importOptional('Serving agents as MCP tools (buildApi `mcp`)', ['@modelcontextprotocol/sdk'], () => import('./mcp/mcp-route.js'));
    registerMcpRoute(app, routes, options.mcp);
  }

  return app;
}
