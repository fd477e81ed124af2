/**
 * The decision routes of the HTTP API: a person's decision on a parked approval, and a client
 * tool's result. The approver is the caller (bearer token or sign-in session), never the body;
 * with `decisionSecret`, a decision carries the token its approval was listed with.
 */
import { z } from 'zod';
import { verifyDecision } from './auth.js';
import { answer, sendError, turnNotFound } from './replies.js';
import { sendDecision } from './send-decision.js';
import { decisionBody, delegationBody, toolResultBody } from './request-schemas.js';
import { caller, zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

export function registerDecisionRoutes(app: ApiApp, { client, access, listing, decisionSecret }: RouteContext): void {
  const api = zodRoutes(app);

  api.post(
    '/api/turns/:turnId/approvals/:approvalId',
    { schema: { params: z.object({ turnId: z.string().min(1), approvalId: z.string().min(1) }), body: decisionBody } },
    async (request, reply) => {
      const approver = caller(request);
      const { turnId, approvalId } = request.params;
      const { decisionToken, ...decision } = request.body;
      // Someone who may not read the turn learns nothing of it: not that it exists, not its tool or approvers.
      if (!(await access.mayDecideApproval(request.caller!, turnId, approvalId))) return turnNotFound(reply, turnId);
      if (decisionSecret) {
        const subject = { turnId, approvalId, inputHash: decision.inputHash ?? '', approver };
        if (!decisionToken || !decision.inputHash || !verifyDecision(decisionSecret, subject, decisionToken)) {
          return sendError(reply, 'InvalidDecisionToken', 'This server requires the decisionToken and inputHash the approval was listed with, for this approver');
        }
      }
      return answer(reply, () => sendDecision({ client, listing }, request.caller!, turnId, approvalId, decision));
    },
  );

  // A delegation: the caller (who must be allowed to decide the call) hands it to named approvers or groups.
  api.post(
    '/api/turns/:turnId/approvals/:approvalId/delegation',
    { schema: { params: z.object({ turnId: z.string().min(1), approvalId: z.string().min(1) }), body: delegationBody } },
    async (request, reply) => {
      const { turnId, approvalId } = request.params;
      if (!(await access.mayDecideApproval(request.caller!, turnId, approvalId))) return turnNotFound(reply, turnId);
      return answer(reply, async () => {
        const result = await client.delegateApproval(turnId, { approvalId, ...request.body, approver: caller(request), approverGroups: [...request.caller!.groups] });
        listing.changed();
        return result;
      });
    },
  );

  api.post(
    '/api/turns/:turnId/tool-results/:toolCallId',
    { schema: { params: z.object({ turnId: z.string().min(1), toolCallId: z.string().min(1) }), body: toolResultBody } },
    async (request, reply) => {
      const { turnId, toolCallId } = request.params;
      if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
      return answer(reply, async () => {
        const result = await client.submitToolResult(turnId, { toolCallId, ...request.body });
        listing.changed();
        return result;
      });
    },
  );
}
