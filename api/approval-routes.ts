/** The approval routes of the HTTP API: the queue of parked calls a caller sees, and the audit trail of decisions. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answer, sendError } from './replies.js';
import { tenantFilterProblem } from './tenant-binding.js';
import { decisionsQuery, listingQuery } from './request-schemas.js';
import { zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

export function registerApprovalRoutes(app: ApiApp, { listing, access }: RouteContext): void {
  const api = zodRoutes(app);
  /** A `?tenant=` the caller may not list is refused (api/tenant-binding.ts); true when refused. */
  const refusedTenant = (request: FastifyRequest, reply: FastifyReply, tenant: string | undefined) => {
    const problem = tenantFilterProblem(request.caller!, access.isAdmin(request.caller!), tenant);
    if (problem) void sendError(reply, 'InvalidRequest', problem);
    return problem !== undefined;
  };

  api.get('/api/approvals', { schema: { querystring: listingQuery } }, async (request, reply) => {
    const { tool, conversation, minAgeSeconds, tenant, limit, after } = request.query;
    if (refusedTenant(request, reply, tenant)) return reply;
    return answer(reply, async () => {
      const now = Date.now();
      return listing.viewFor(
        await listing.parkedPage(request.caller!, { ...(limit !== undefined ? { limit } : {}), ...(after !== undefined ? { after } : {}) }),
        request.caller!,
        (call) =>
          (tenant === undefined || call.tenant === tenant) &&
          (tool === undefined || call.toolName === tool) &&
          (conversation === undefined || call.conversationId === conversation) &&
          (minAgeSeconds === undefined || now - Date.parse(call.requestedAt) >= minAgeSeconds * 1000),
      );
    });
  });

  // The audit trail: every decision, a person's or a policy's, newest first; `format=jsonl` exports
  // one JSON object per line. `until` is the cursor: pass the last decision's `decidedAt`.
  api.get('/api/decisions', { schema: { querystring: decisionsQuery } }, async (request, reply) => {
    const { format, ...query } = request.query;
    if (refusedTenant(request, reply, query.tenant)) return reply;
    if (format === 'jsonl') {
      return answer(reply, async () => {
        const { decisions } = await listing.readableDecisions(request.caller!, query);
        reply.type('application/x-ndjson');
        return decisions.map((decision) => `${JSON.stringify(decision)}\n`).join('');
      });
    }
    return answer(reply, () => listing.readableDecisions(request.caller!, query));
  });
}
