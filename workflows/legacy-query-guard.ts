/**
 * A workflow interceptor module that every turnpike workflow bundle carries (worker/plugin.ts):
 * a completion that answers a legacy query keeps only query answers.
 *
 * Why: a query that arrives while no workflow task is pending reaches a worker as a legacy query
 * task. On a worker with an empty cache, that task carries the history as it is when polled,
 * which may end with events that came after the query (an activity's result), and Core applies
 * them live: workflow code runs inside the query's task. If that activation fails, Core answers
 * the query with the failure, then hands the same query to the same workflow instance, and the
 * TypeScript SDK (1.24.0) answers it with the commands the failed activation left behind beside
 * the query's answer. Core refuses such a completion ("legacy query response along with other
 * commands") and shuts the whole worker down. See docs/sdk-reports/legacy-query-update-no-validator.
 *
 * Dropping those commands changes nothing the server sees: Core accepts nothing but query
 * answers beside a legacy query's answer, and the instance that made them is evicted after its
 * failed activation. Every other completion passes as it is.
 */
import type { WorkflowInterceptors } from '@temporalio/workflow';

/** The query id Core gives a legacy query (`LEGACY_QUERY_ID`, worker/workflow/mod.rs). */
const LEGACY_QUERY_ID = 'legacy_query';

export const interceptors = (): WorkflowInterceptors => ({
  internals: [
    {
      concludeActivation(input, next) {
        const output = next(input);
        const answersLegacyQuery = output.commands.some((command) => command.respondToQuery?.queryId === LEGACY_QUERY_ID);
        return answersLegacyQuery ? { ...output, commands: output.commands.filter((command) => command.respondToQuery) } : output;
      },
    },
  ],
});
