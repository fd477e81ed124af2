/** The turn routes of the HTTP API: start a turn, read one, and a parked call's context. */
import { z } from 'zod';
import { isTurnEnded } from '../workflows/types/turn-statuses.js';
import type { AgentTurnInput } from '../workflows/types/index.js';
import { answer, sendError, turnNotFound } from './replies.js';
import { requestPlacement } from './tenant-binding.js';
import { startTurnBody, turnParams } from './request-schemas.js';
import { caller, zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

export function registerTurnRoutes(app: ApiApp, { client, access }: RouteContext): void {
  const api = zodRoutes(app);

  api.post('/api/turns', { schema: { body: startTurnBody } }, async (request, reply) => {
    const { turnId, input, tenant, priority } = request.body;
    // The tenant is the caller's own (a body's only from an admin): refused before anything starts.
    const placement = requestPlacement(request.caller!, access.isAdmin(request.caller!), { ...(tenant !== undefined ? { tenant } : {}), ...(priority !== undefined ? { priority } : {}) });
    if (typeof placement === 'string') return sendError(reply, 'InvalidRequest', placement);
    // Starting an id that exists returns that turn: only to one who may read it.
    const existing = await client.describeStart(turnId);
    if (existing && !(await access.mayReadTurn(request.caller!, turnId, existing))) return turnNotFound(reply, turnId);
    return answer(reply, async () => ({ turnId: (await client.startTurn(input as AgentTurnInput, { turnId, startedBy: caller(request), ...placement })).workflowId }), 201);
  });

  api.get('/api/turns/:turnId', { schema: { params: turnParams } }, async (request, reply) => {
    const { turnId } = request.params;
    if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
    return answer(reply, async () => {
      const state = await client.turnState(turnId);
      if (isTurnEnded(state.status)) return { turnId, state, result: await client.turnResult(turnId) };
      // A model step queued behind the model queue's rate: one describe per read of a running turn.
      const waitingForCapacity = await client.waitingForCapacity(turnId);
      return { turnId, state, ...(waitingForCapacity ? { waitingForCapacity } : {}) };
    });
  });

  api.get(
    '/api/turns/:turnId/calls/:toolCallId/context',
    { schema: { params: z.object({ turnId: z.string().min(1), toolCallId: z.string().min(1) }) } },
    async (request, reply) => {
      if (!(await access.mayReadTurn(request.caller!, request.params.turnId))) return turnNotFound(reply, request.params.turnId);
      return answer(reply, () => client.callContext(request.params.turnId, request.params.toolCallId));
    },
  );
}
