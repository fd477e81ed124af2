/** The turn routes of the HTTP API: start a turn, read one, and a parked call's context. */
import { z } from 'zod';
import { isTurnEnded } from '../workflows/types/turn-statuses.js';
import type { AgentTurnInput } from '../workflows/types/index.js';
import { answer, turnNotFound } from './replies.js';
import { startTurnBody, turnParams } from './request-schemas.js';
import { caller, zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

export function registerTurnRoutes(app: ApiApp, { client, access }: RouteContext): void {
  const api = zodRoutes(app);

  api.post('/api/turns', { schema: { body: startTurnBody } }, async (request, reply) => {
    const { turnId, input } = request.body;
    // Starting an id that exists returns that turn: only to one who may read it.
    const existing = await client.describeStart(turnId);
    if (existing && !(await access.mayReadTurn(request.caller!, turnId, existing))) return turnNotFound(reply, turnId);
    return answer(reply, async () => ({ turnId: (await client.startTurn(input as AgentTurnInput, { turnId, startedBy: caller(request) })).workflowId }), 201);
  });

  api.get('/api/turns/:turnId', { schema: { params: turnParams } }, async (request, reply) => {
    const { turnId } = request.params;
    if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
    return answer(reply, async () => {
      const state = await client.turnState(turnId);
      return { turnId, state, ...(isTurnEnded(state.status) ? { result: await client.turnResult(turnId) } : {}) };
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
