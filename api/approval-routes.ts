/** The approval routes of the HTTP API: the queue of parked calls a caller sees, and the audit trail of decisions. */
import { answer } from './replies.js';
import { decisionsQuery, listingQuery } from './request-schemas.js';
import { zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

export function registerApprovalRoutes(app: ApiApp, { listing }: RouteContext): void {
  const api = zodRoutes(app);

  api.get('/api/approvals', { schema: { querystring: listingQuery } }, async (request, reply) => {
    const { tool, conversation, minAgeSeconds } = request.query;
    return answer(reply, async () => {
      const now = Date.now();
      return listing.viewFor(
        await listing.parkedCalls(),
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
  api.get('/api/decisions', { schema: { querystring: decisionsQuery } }, async (request, reply) => {
    const { format, ...query } = request.query;
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
