/**
 * What every route of the HTTP API is given by `buildApi`: the client, the reading rights, the
 * shared listing of parked calls, and whether decisions must be signed. The routes live by
 * resource: turns (turn-routes.ts), decisions and results (decision-routes.ts), approvals and the
 * audit trail (approval-routes.ts), conversations (conversation-routes.ts); event streams and
 * /api/chat have their own files.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TurnpikeClient } from '../client/turnpike-client.js';
import type { ParkedListing } from './parked-listing.js';
import type { ReadAccess } from './read-access.js';

export type ApiApp = FastifyInstance<never, never, never, never, ZodTypeProvider> | FastifyInstance;

/** The app with zod's type provider, so that a route's request is typed by its schemas. */
export function zodRoutes(app: ApiApp) {
  return (app as FastifyInstance).withTypeProvider<ZodTypeProvider>();
}

export interface RouteContext {
  client: TurnpikeClient;
  access: ReadAccess;
  listing: ParkedListing;
  /** When set, every decision must carry the signed token the approval was listed with. */
  decisionSecret?: string;
}

/** The caller of an /api/ route; the authentication hook has answered 401 for requests without one. */
export function caller(request: FastifyRequest): string {
  return request.caller!.identity;
}
