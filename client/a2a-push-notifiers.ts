/**
 * Starting an A2A push notifier (workflows/a2a/a2a-push-notifier.ts) for a config, on the turns'
 * task queue, with the config in its memo so that listings read visibility, not the workflow.
 * Idempotent by its workflow id (`<task id>/push/<config id>`): a second start finds the first's run.
 */
import type { Client } from '@temporalio/client';
import { A2A_PUSH_NOTIFIER_WORKFLOW, a2aPushNotifierId, type A2aPushConfig, type A2aPushNotifierInput } from '../workflows/a2a/a2a-push-notifier.js';

export async function startA2aPushNotifier(client: Client, taskQueue: string, config: A2aPushConfig): Promise<void> {
  const input: A2aPushNotifierInput = { config };
  await client.workflow.start(A2A_PUSH_NOTIFIER_WORKFLOW, {
    workflowId: a2aPushNotifierId(config.taskId, config.id),
    taskQueue,
    args: [input],
    // A2A_PUSH_CONFIG_MEMO_KEY, spelled out so that docs/contract.md's check reads it here.
    memo: { turnpikeA2aPushConfig: config },
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
