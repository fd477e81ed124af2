/**
 * A workflow interceptor module (for `query-after-failure.ts sanitize`): a completion that answers
 * a legacy query keeps only query answers. Core accepts nothing else beside a legacy query's
 * answer (`validate_completion`, worker/workflow/mod.rs); anything else there is left over from an
 * activation that failed and that Core has already reported.
 */
import type { WorkflowInterceptors } from '@temporalio/workflow';

export const interceptors = (): WorkflowInterceptors => ({
  internals: [
    {
      concludeActivation(input, next) {
        const output = next(input);
        const answersLegacyQuery = output.commands.some((command) => command.respondToQuery?.queryId === 'legacy_query');
        return answersLegacyQuery ? { ...output, commands: output.commands.filter((command) => command.respondToQuery) } : output;
      },
    },
  ],
});
