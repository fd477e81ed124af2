/**
 * The evaluation routes of the HTTP API (docs/evaluations.md, "Over the HTTP API"): start an
 * evaluation of turns the caller may read, list the caller's evaluations, read one's report.
 * The run records its starter in its memo (`startedBy`); only that caller, or an admin, reads it.
 * An evaluation the caller may not read and one that does not exist get the same 404.
 */
import type { FastifyReply } from 'fastify';
import { STARTED_BY_MEMO_KEY } from '../client/listings.js';
import { defaultEvaluationQueue, EVALUATION_WORKFLOW, MAX_EVALUATION_TURNS, type EvaluationChange } from '../workflows/evaluation/evaluation-types.js';
import type { GraderSpec } from '../workflows/evaluation/grader-types.js';
import type { Caller } from './auth.js';
import { answer, sendError, turnNotFound } from './replies.js';
import { evaluationParams, startEvaluationBody } from './request-schemas.js';
import { firstUnreadable, readableTurnsOfQuery } from './evaluation-turns.js';
import { caller, zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

/** Evaluations `GET /api/evaluations` reads at most, newest first. */
const LISTED_EVALUATIONS = 1_000;

const evaluationNotFound = (reply: FastifyReply, evaluationId: string) => sendError(reply, 'NotFound', `Evaluation ${evaluationId} not found`);

export function registerEvaluationRoutes(app: ApiApp, { client, access }: RouteContext): void {
  const api = zodRoutes(app);
  const mayReadRun = (who: Caller, startedBy: unknown) => access.isAdmin(who) || (typeof startedBy === 'string' && startedBy === who.identity);

  api.post('/api/evaluations', { schema: { body: startEvaluationBody } }, async (request, reply) => {
    const who = request.caller!;
    const { turnIds, query, limit, change, graders, ...rest } = request.body;
    let turns: string[];
    if (turnIds) {
      // Every listed turn is checked before anything starts: one the caller may not read refuses the request.
      turns = [...new Set(turnIds)];
      const refused = await firstUnreadable(access, who, turns);
      if (refused !== undefined) return turnNotFound(reply, refused);
    } else {
      const found = await readableTurnsOfQuery(client, access, who, query!, limit ?? MAX_EVALUATION_TURNS);
      if ('problem' in found) return sendError(reply, 'InvalidRequest', `Invalid evaluate: ${found.problem}`);
      turns = found.turnIds;
    }
    return answer(reply, () => client.evaluate({ turnIds: turns, change: change as EvaluationChange, ...(graders ? { graders: graders as GraderSpec[] } : {}), ...rest, ...(who.tenant !== undefined ? { tenant: who.tenant } : {}), startedBy: caller(request) }), 201);
  });

  // The runs of this API's evaluation queue (the one `POST /api/evaluations` starts them on), newest first.
  api.get('/api/evaluations', async (request, reply) => {
    const who = request.caller!;
    const evaluationQueue = defaultEvaluationQueue(client.taskQueue).replace(/"/g, '\\"');
    return answer(reply, async () => {
      const evaluations: Array<{ evaluationId: string; status: string; startedAt: string; closedAt?: string; startedBy?: string }> = [];
      let read = 0;
      for await (const execution of client.client.workflow.list({ query: `WorkflowType = "${EVALUATION_WORKFLOW}" AND TaskQueue = "${evaluationQueue}"`, pageSize: 200 })) {
        if (++read > LISTED_EVALUATIONS) break;
        const startedBy = execution.memo?.[STARTED_BY_MEMO_KEY];
        if (!mayReadRun(who, startedBy)) continue;
        evaluations.push({
          evaluationId: execution.workflowId,
          status: execution.status.name,
          startedAt: execution.startTime.toISOString(),
          ...(execution.closeTime ? { closedAt: execution.closeTime.toISOString() } : {}),
          ...(typeof startedBy === 'string' ? { startedBy } : {}),
        });
      }
      return { evaluations };
    });
  });

  api.get('/api/evaluations/:evaluationId', { schema: { params: evaluationParams } }, async (request, reply) => {
    const { evaluationId } = request.params;
    const started = await client.describeStart(evaluationId);
    if (!started || !mayReadRun(request.caller!, started.startedBy)) return evaluationNotFound(reply, evaluationId);
    return answer(reply, () => client.evaluationReport(evaluationId));
  });
}
