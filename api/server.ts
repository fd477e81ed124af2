/**
 * turnpike's HTTP API, for dashboards and backends not written in TypeScript, and the
 * approval dashboard page. Built on fastify with zod request validation:
 *
 *   malformed body or parameters  → 400
 *   no or unknown bearer token    → 401
 *   unknown turn, approval or call → 404
 *   a decision or result the turn rejects (already decided, expired, not allowed...) → 409
 * Each error body is `{ error: { type, message } }`; every type and its status is in
 * `REJECTION_TYPES` (workflows/rejection-types.ts).
 *
 * The approver of a decision is the identity of the request's bearer token or sign-in session
 * (api/session.ts, api/login.ts), never the body.
 */
import { MAX_STORED_PART_BYTES } from '../workflows/binary-parts.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TurnpikeClient, TurnpikeNotFoundError, TurnpikeRejectedError, type ParkedCall } from '../client/turnpike-client.js';
import { mayDecide } from '../workflows/call-checks.js';
import { REJECTION_TYPES, type RejectionType } from '../workflows/rejection-types.js';
import { isTurnEnded } from '../workflows/turn-statuses.js';
import type { AgentDefinition, AgentTurnInput, TurnBudget, UserContentPart } from '../workflows/types.js';
import { decisionBody, decisionsQuery, listingQuery, sendMessageBody, startTurnBody, toolResultBody, turnParams } from './request-schemas.js';
import { ApprovalsFeed, DEFAULT_FEED_INTERVAL_MS } from './approvals-feed.js';
import { registerApprovalsEventsRoute } from './approvals-events-route.js';
import { registerEventStreamRoutes } from './event-stream-routes.js';
import { registerUiChatRoute } from './ui-chat-route.js';
import { StreamTokens } from './stream-token.js';
import { ReadAccess, type ReadAccessOptions } from './read-access.js';
import { registerSessions } from './session.js';
import { registerSessionRoutes, type LoginOptions } from './login.js';
import { anyOf, oidcAuthenticator, signDecision, staticTokenAuthenticator, verifyDecision, type Authenticator, type Caller, type OidcOptions } from './auth.js';

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
}

const LISTING_TTL_MS = 500;
/**
 * The largest request body the API reads: one image or document of the largest size the content
 * store takes, base64-encoded, and the rest of the request. Parts of 128 KiB or more are stored
 * by the client before the turn starts; only their references reach workflow history.
 */
const API_BODY_LIMIT_BYTES = Math.ceil((MAX_STORED_PART_BYTES * 4) / 3) + 2 * 1024 * 1024;
/** Parked turns one listing reads at most (from visibility; see `TurnpikeClient.listParkedCalls`). */
const DEFAULT_LISTING_LIMIT = 5_000;

/** A call a person decides: a tool approval, or a budget approval (extend or stop; docs/budgets.md). */
function decidable(call: ParkedCall): boolean {
  return call.kind === 'approval' || call.kind === 'budget';
}
/** The page's modules, which dashboard.js imports by relative URL: each is served beside it. */
const DASHBOARD_MODULES = ['page', 'requests', 'format', 'schema-form', 'cards', 'decisions', 'approvals', 'questions', 'listing', 'feed', 'turn-view', 'session', 'keyboard'];
const DASHBOARD_FILES: Record<string, string> = {
  '/': 'index.html',
  '/dashboard.js': 'dashboard.js',
  '/dashboard.css': 'dashboard.css',
  ...Object.fromEntries(DASHBOARD_MODULES.map((name) => [`/${name}.js`, `${name}.js`])),
};
const CONTENT_TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** `{ error: { type, message } }` with the type's status, unless the cause had a more precise one (413, 415). */
function sendError(reply: FastifyReply, type: RejectionType, message: string, status: number = REJECTION_TYPES[type].httpStatus) {
  return reply.status(status).send({ error: { type, message } });
}

/** Maps the client's typed errors to HTTP statuses; anything else is a 500. */
async function answer<T>(reply: FastifyReply, work: () => Promise<T>, status = 200) {
  try {
    return reply.status(status).send(await work());
  } catch (error) {
    if (error instanceof TurnpikeNotFoundError) return sendError(reply, 'NotFound', error.message);
    if (error instanceof TurnpikeRejectedError) return sendError(reply, error.type, error.message);
    throw error;
  }
}

export async function buildApi(options: ApiOptions): Promise<FastifyInstance> {
  // 2 MiB rather than fastify's 1 MiB: a turn may carry inline images and documents up to the
  // limits the workflow enforces (1.5 million base64 characters together; workflows/binary-parts.ts).
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: API_BODY_LIMIT_BYTES }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const dashboardDirectory = fileURLToPath(new URL('./dashboard/', import.meta.url));

  app.setErrorHandler((error: { validation?: unknown; statusCode?: number; message: string }, _request, reply) => {
    if (error.validation || error.statusCode === 400) return sendError(reply, 'InvalidRequest', error.message);
    if (error.statusCode === 415 || error.statusCode === 413) return sendError(reply, 'InvalidRequest', error.message, error.statusCode);
    app.log.error(error);
    return sendError(reply, 'InternalError', 'turnpike could not complete the request');
  });

  const authenticators = [
    ...(options.tokens && options.tokens.size > 0 ? [staticTokenAuthenticator(options.tokens)] : []),
    ...(options.oidc ? [oidcAuthenticator(options.oidc)] : []),
    ...(options.authenticate ? [options.authenticate] : []),
  ];
  if (authenticators.length === 0 && !options.login) throw new Error('buildApi needs tokens, oidc, login or authenticate: decisions must carry who made them');
  const authenticate = anyOf(...authenticators);
  const sessions = await registerSessions(app, { ...(options.sessionSecret ? { secret: options.sessionSecret } : {}), ...(options.login?.sessionMaxAge ? { maxAgeSeconds: options.login.sessionMaxAge } : {}) });
  await registerSessionRoutes(app, { sessions, authenticate, ...(options.login ? { login: options.login } : {}) });

  // Every /api/ route but the public configuration needs a caller; the page and its files do not.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/') || request.url.startsWith('/api/config')) return;
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
    request.caller = { identity: signedIn.identity, groups: signedIn.groups };
  });

  /** The caller of an /api/ route; the hook has answered 401 for requests without one. */
  function caller(request: FastifyRequest): string {
    return request.caller!.identity;
  }

  for (const [url, file] of Object.entries(DASHBOARD_FILES)) {
    // Read once: the page is static for the life of the server.
    const body = readFileSync(`${dashboardDirectory}${file}`, 'utf8');
    app.get(url, async (_request, reply) => reply.type(CONTENT_TYPES[file.split('.').pop()!]).send(body));
  }

  /**
   * Parked calls, shared by every request within LISTING_TTL_MS: the live feed and API callers
   * (and dashboards that fell back to polling) list often, and a listing costs visibility pages (plus a `turnState` query for the few
   * turns whose memo cannot answer), so concurrent pollers share one listing instead of
   * multiplying that load.
   */
  let listing: { at: number; calls: Promise<ParkedCall[]> } | undefined;
  const access = new ReadAccess(options.client, options.access);
  /** Per listing: the starters of the conversations whose client-tool calls and questions it lists, for reading rights. */
  const listedStarters = new WeakMap<readonly ParkedCall[], Map<string, string | undefined>>();
  const parkedCalls = (): Promise<ParkedCall[]> => {
    if (!listing || Date.now() - listing.at > LISTING_TTL_MS) {
      const calls = options.client.listParkedCalls({ limit: options.listingLimit ?? DEFAULT_LISTING_LIMIT }).then(async (all) => {
        const conversations = all.flatMap((call) => (!decidable(call) && !call.startedBy && call.conversationId ? [call.conversationId] : []));
        listedStarters.set(all, await access.conversationStarters(conversations));
        return all;
      });
      listing = { at: Date.now(), calls };
      calls.catch(() => (listing = undefined));
    }
    return listing.calls;
  };

  /** What `caller` sees of the listing: the calls they may decide, with counts per tool and signed when decisions are. */
  const viewFor = (all: readonly ParkedCall[], who: Caller, keep: (call: ParkedCall) => boolean = () => true) => {
    const identity = who.identity;
    // Each approver sees what they may decide (the turn checks again when they do); client-tool
    // calls and MCP questions are listed to those who may read their turn (api/read-access.ts).
    const starters = listedStarters.get(all) ?? new Map<string, string | undefined>();
    const mine = all.filter((call) =>
      decidable(call) ? mayDecide(call, { approver: identity, approverGroups: who.groups }) : access.mayReadListed(who, call, starters),
    );
    const counts: Record<string, number> = {};
    for (const call of mine) if (decidable(call)) counts[call.toolName] = (counts[call.toolName] ?? 0) + 1;
    const sign = (call: ParkedCall) =>
      options.decisionSecret && call.approvalId
        ? { decisionToken: signDecision(options.decisionSecret, { turnId: call.turnWorkflowId, approvalId: call.approvalId, inputHash: call.inputHash, approver: identity }) }
        : {};
    const sorted = mine.filter(keep).sort((a, b) => a.expiresAt.localeCompare(b.expiresAt));
    return { approver: identity, counts, calls: sorted.map((call) => ({ ...call, ...sign(call) })) };
  };
  const feed = new ApprovalsFeed(parkedCalls, options.approvalsFeedIntervalMs ?? DEFAULT_FEED_INTERVAL_MS);
  /** Decisions on turns the caller may read, each turn checked once; `next` pages on from the last one read. */
  const readableDecisions = async (who: Caller, query: Omit<z.infer<typeof decisionsQuery>, 'format'>) => {
    const all = await options.client.listDecisions(query);
    const next = all.length > 0 ? { next: { until: all.at(-1)!.decidedAt } } : {};
    if (access.isAdmin(who)) return { decisions: all, ...next };
    const turns = [...new Set(all.map((decision) => decision.turnWorkflowId))];
    const readable = new Set<string>();
    for (let at = 0; at < turns.length; at += 32) {
      const batch = turns.slice(at, at + 32);
      const allowed = await Promise.all(batch.map((turnId) => access.mayReadTurn(who, turnId).catch(() => false)));
      batch.forEach((turnId, index) => allowed[index] && readable.add(turnId));
    }
    return { decisions: all.filter((decision) => readable.has(decision.turnWorkflowId)), ...next };
  };
  /** The same answer for a turn that does not exist and one the caller may not read. */
  const turnNotFound = (reply: FastifyReply, turnId: string) => sendError(reply, 'NotFound', `No turn ${JSON.stringify(turnId)} was found`);
  const conversationNotFound = (reply: FastifyReply, conversationId: string) => sendError(reply, 'NotFound', `No conversation ${JSON.stringify(conversationId)} was found`);
  /** After a decision or a result: the next listing must not show the call, and open dashboards should learn at once. */
  const listingChanged = () => {
    listing = undefined;
    feed.nudge();
  };

  app.get('/api/config', async () => ({ temporalUiUrl: options.temporalUiUrl ?? null, namespace: options.namespace ?? 'default', signedDecisions: Boolean(options.decisionSecret), login: Boolean(options.login) }));

  app.get('/api/me', async (request) => {
    // A signed-in page also learns its CSRF token and when the session ends; a bearer caller needs neither.
    const signedIn = request.headers.authorization ? undefined : sessions.caller(request);
    const session = signedIn ? { csrfToken: sessions.csrfToken(request), expiresAt: new Date(signedIn.expiresAt).toISOString() } : {};
    return { identity: caller(request), groups: request.caller!.groups, ...session };
  });

  app.post('/api/turns', { schema: { body: startTurnBody } }, async (request, reply) => {
    const { turnId, input } = request.body;
    // Starting an id that exists returns that turn: only to one who may read it.
    const existing = await options.client.describeStart(turnId);
    if (existing && !(await access.mayReadTurn(request.caller!, turnId, existing))) return turnNotFound(reply, turnId);
    return answer(reply, async () => ({ turnId: (await options.client.startTurn(input as AgentTurnInput, { turnId, startedBy: caller(request) })).workflowId }), 201);
  });

  app.get('/api/turns/:turnId', { schema: { params: turnParams } }, async (request, reply) => {
    const { turnId } = request.params;
    if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
    return answer(reply, async () => {
      const state = await options.client.turnState(turnId);
      return { turnId, state, ...(isTurnEnded(state.status) ? { result: await options.client.turnResult(turnId) } : {}) };
    });
  });

  app.get('/api/approvals', { schema: { querystring: listingQuery } }, async (request, reply) => {
    const { tool, conversation, minAgeSeconds } = request.query;
    return answer(reply, async () => {
      const now = Date.now();
      return viewFor(
        await parkedCalls(),
        request.caller!,
        (call) =>
          (tool === undefined || call.toolName === tool) &&
          (conversation === undefined || call.conversationId === conversation) &&
          (minAgeSeconds === undefined || now - Date.parse(call.requestedAt) >= minAgeSeconds * 1000),
      );
    });
  });

  // The audit trail: every decision, a person's or a policy's, newest first; `format=jsonl` exports
  // one JSON object per line. `until` is the cursor: pass the last decision's `decidedAt`.
  app.get('/api/decisions', { schema: { querystring: decisionsQuery } }, async (request, reply) => {
    const { format, ...query } = request.query;
    if (format === 'jsonl') {
      return answer(reply, async () => {
        const { decisions } = await readableDecisions(request.caller!, query);
        reply.type('application/x-ndjson');
        return decisions.map((decision) => `${JSON.stringify(decision)}\n`).join('');
      });
    }
    return answer(reply, () => readableDecisions(request.caller!, query));
  });

  app.get(
    '/api/turns/:turnId/calls/:toolCallId/context',
    { schema: { params: z.object({ turnId: z.string().min(1), toolCallId: z.string().min(1) }) } },
    async (request, reply) => {
      if (!(await access.mayReadTurn(request.caller!, request.params.turnId))) return turnNotFound(reply, request.params.turnId);
      return answer(reply, () => options.client.callContext(request.params.turnId, request.params.toolCallId));
    },
  );

  app.post(
    '/api/turns/:turnId/approvals/:approvalId',
    { schema: { params: z.object({ turnId: z.string().min(1), approvalId: z.string().min(1) }), body: decisionBody } },
    async (request, reply) => {
      const approver = caller(request);
      const { turnId, approvalId } = request.params;
      const { decisionToken, ...decision } = request.body;
      // Someone who may not read the turn learns nothing of it: not that it exists, not its tool or approvers.
      if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
      if (options.decisionSecret) {
        const subject = { turnId, approvalId, inputHash: decision.inputHash ?? '', approver };
        if (!decisionToken || !decision.inputHash || !verifyDecision(options.decisionSecret, subject, decisionToken)) {
          return sendError(reply, 'InvalidDecisionToken', 'This server requires the decisionToken and inputHash the approval was listed with, for this approver');
        }
      }
      return answer(reply, async () => {
        const result = await options.client.approveToolCall(turnId, { approvalId, ...decision, approver, approverGroups: [...request.caller!.groups] });
        listingChanged();
        return result;
      });
    },
  );

  app.post(
    '/api/turns/:turnId/tool-results/:toolCallId',
    { schema: { params: z.object({ turnId: z.string().min(1), toolCallId: z.string().min(1) }), body: toolResultBody } },
    async (request, reply) => {
      const { turnId, toolCallId } = request.params;
      if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
      return answer(reply, async () => {
        const result = await options.client.submitToolResult(turnId, { toolCallId, ...request.body });
        listingChanged();
        return result;
      });
    },
  );

  app.post(
    '/api/conversations/:conversationId/messages',
    { schema: { params: z.object({ conversationId: z.string().min(1).max(200) }), body: sendMessageBody } },
    async (request, reply) => {
      const { conversationId } = request.params;
      const { model, system, content, agents, agent, budget, ...message } = request.body;
      const conversation = {
        ...(model || !agents ? { model: model ?? { provider: 'scripted' as const, model: 'demo' } } : {}),
        ...(system ? { system } : {}),
        ...(agents ? { agents: agents as Record<string, AgentDefinition> } : {}),
        ...(agent !== undefined ? { agent } : {}),
        ...(budget ? { budget: budget as TurnBudget } : {}),
      };
      // The parts' details are the conversation's to check: it refuses a bad one before accepting the message.
      const parts = content ? { content: content as unknown as UserContentPart[] } : {};
      // A first message creates the conversation, with the caller as its starter; later ones come from its readers.
      if ((await access.mayReadConversation(request.caller!, conversationId)) === false) return conversationNotFound(reply, conversationId);
      return answer(reply, () => options.client.sendMessage({ conversationId, conversation, ...message, ...parts, startedBy: caller(request) }), 202);
    },
  );

  app.get(
    '/api/conversations/:conversationId/history',
    { schema: { params: z.object({ conversationId: z.string().min(1) }), querystring: z.object({ offset: z.coerce.number().int().min(0).optional(), limit: z.coerce.number().int().min(1).max(1000).optional() }) } },
    async (request, reply) => {
      if ((await access.mayReadConversation(request.caller!, request.params.conversationId)) !== true) return conversationNotFound(reply, request.params.conversationId);
      return answer(reply, () => options.client.history(request.params.conversationId, request.query));
    },
  );

  const streamTokens = new StreamTokens(options.streamSecret);
  registerEventStreamRoutes(app, {
    client: options.client,
    authenticate,
    tokens: streamTokens,
    signedIn: (request) => sessions.caller(request),
    mayRead: async (who, scope, target) => (scope === 'turn' ? access.mayReadTurn(who, target) : (await access.mayReadConversation(who, target)) === true),
    notFound: (reply, scope, target) => (scope === 'turn' ? turnNotFound(reply, target) : conversationNotFound(reply, target)),
    unauthorized: (reply) => sendError(reply, 'Unauthorized', 'Open the stream with a stream token for it (POST …/stream-token) or Authorization: Bearer <token>'),
    invalid: (reply, message) => sendError(reply, 'InvalidRequest', message),
  });
  registerApprovalsEventsRoute(app, {
    feed,
    authenticate,
    tokens: streamTokens,
    signedIn: (request) => sessions.caller(request),
    view: (calls, who) => viewFor(calls, who),
    unauthorized: (reply) => sendError(reply, 'Unauthorized', 'Open the stream with a stream token (POST /api/approvals/stream-token) or Authorization: Bearer <token>'),
  });
  registerUiChatRoute(app, {
    client: options.client,
    mayRead: (who, conversationId) => access.mayReadConversation(who, conversationId),
    notFound: (reply, conversationId) => conversationNotFound(reply, conversationId),
    rejected: (reply, error) => sendError(reply, error.type, error.message),
    invalid: (reply, message) => sendError(reply, 'InvalidRequest', message),
  });

  return app;
}
