/**
 * The approvals listing as Server-Sent Events, for the dashboard (see approvals-feed.ts):
 *
 *   POST /api/approvals/stream-token      → { token, expiresAt, url }
 *   GET  /api/approvals/events?token=…[&tenant=…]   → text/event-stream
 *
 * Each message is `data: {"approver"…,"counts"…,"calls":[…]}` — the same body as
 * `GET /api/approvals` for this caller (and `?tenant=`, refused as the listing refuses it) — sent
 * when the stream opens and whenever it changes.
 * A listing that fails is sent as `event: listing-error` with `{ message }`; the stream stays open
 * and the next listing that works is sent as usual. `Authorization: Bearer` works too, and so does
 * the sign-in cookie (api/session.ts): such a stream ends when the session does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ParkedCall } from '../client/turnpike-client.js';
import type { ApprovalsFeeds } from './approvals-feed.js';
import type { Authenticator, Caller } from './auth.js';
import { approvalsEventsQuery } from './request-schemas.js';
import type { StreamTokens } from './stream-token.js';
import { openEventStream } from './sse.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
const TARGET = 'approvals';

type Api = FastifyInstance<never, never, never, never, ZodTypeProvider> | FastifyInstance;

export interface ApprovalsEventsRouteOptions {
  feed: ApprovalsFeeds;
  authenticate: Authenticator;
  tokens: StreamTokens;
  /** The caller of the request's sign-in cookie, with when the session ends. */
  signedIn?: (request: FastifyRequest) => (Caller & { expiresAt: number }) | undefined;
  /** The listing body `GET /api/approvals` answers this caller with, of the calls `keep` keeps. */
  view: (calls: readonly ParkedCall[], caller: Caller, keep: (call: ParkedCall) => boolean) => unknown;
  /** Why `caller` may not name `tenant` in `?tenant=` (api/tenant-binding.ts), or undefined. */
  tenantProblem: (caller: Caller, tenant: string | undefined) => string | undefined;
  unauthorized: (reply: FastifyReply) => FastifyReply;
  invalid: (reply: FastifyReply, message: string) => FastifyReply;
}

export function registerApprovalsEventsRoute(app: Api, options: ApprovalsEventsRouteOptions): void {
  const typed = app as FastifyInstance & { withTypeProvider: FastifyInstance['withTypeProvider'] };
  const api = typed.withTypeProvider<ZodTypeProvider>();

  api.post('/api/approvals/stream-token', async (request) => {
    const { identity, groups, tenant } = request.caller!;
    const issued = await options.tokens.issue({ scope: 'approvals', target: TARGET, identity, groups, ...(tenant !== undefined ? { tenant } : {}) });
    return { ...issued, url: `/api/approvals/events?token=${issued.token}` };
  });

  api.get('/api/approvals/events', { schema: { querystring: approvalsEventsQuery } }, async (request, reply) => {
    const signedIn = request.headers.authorization || request.query.token ? undefined : options.signedIn?.(request);
    const caller: Caller | undefined = request.headers.authorization
      ? await options.authenticate(request.headers.authorization)
      : request.query.token
        ? await options.tokens.verifyCaller(request.query.token, 'approvals', TARGET)
        : signedIn && { identity: signedIn.identity, groups: signedIn.groups, ...(signedIn.tenant !== undefined ? { tenant: signedIn.tenant } : {}) };
    if (!caller) return options.unauthorized(reply);
    const { tenant } = request.query;
    const problem = options.tenantProblem(caller, tenant);
    if (problem) return options.invalid(reply, problem);

    const response = openEventStream(reply);
    response.write('retry: 2000\n\n');
    let last: string | undefined;
    const unsubscribe = options.feed.subscribe(caller, (calls) => {
      if (calls instanceof Error) {
        response.write(`event: listing-error\ndata: ${JSON.stringify({ message: calls.message })}\n\n`);
        last = undefined;
        return;
      }
      const body = JSON.stringify(options.view(calls, caller, (call) => tenant === undefined || call.tenant === tenant));
      if (body === last) return;
      last = body;
      response.write(`data: ${body}\n\n`);
    });
    const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    // A signed-in reader hears nothing after the session ends; EventSource then reconnects and gets 401.
    const sessionEnd = signedIn ? setTimeout(() => response.end(), Math.min(signedIn.expiresAt - Date.now(), 2 ** 31 - 1)) : undefined;
    reply.raw.on('close', () => {
      clearTimeout(sessionEnd);
      clearInterval(keepAlive);
      unsubscribe();
      response.end();
    });
  });
}
