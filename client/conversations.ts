/**
 * The conversation part of `TurnpikeClient`: sending a user message, which starts the
 * conversation with its first one (update-with-start). Its history, state and events are one
 * query or one stream each, in the client's methods.
 */
import { WithStartWorkflowOperation } from '@temporalio/client';
import { AGENT_CONVERSATION_WORKFLOW, sendMessageUpdate } from '../workflows/messages/definitions.js';
import { agentsProblem } from '../workflows/conversation/conversation-agents.js';
import { budgetProblem } from '../workflows/budgets/budget-spend.js';
import type { agentConversation } from '../workflows/registered-workflows.js';
import type { AgentConversationInput, SendMessageInput, SendMessageResult } from '../workflows/types/index.js';
import { storeLargeContent } from '../content/stored-content.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from './errors.js';
import { STARTED_BY_MEMO_KEY } from './listings.js';
import { rejections } from './rejections.js';
import { withModelTaskQueue, type WorkflowStarter } from './turns.js';
import { toOutputSpec, type OutputOption } from './typed-output.js';
import { refuseWithoutTenantAttribute, startPlacement, type TenantPlacement } from './tenants.js';
import { startWithApprovers } from './approvers-attribute.js';

/** Where a message goes and who sends it, beside the message itself (`TurnpikeClient.sendMessage` says what each is). */
interface Addressed extends TenantPlacement {
  conversationId: string;
  conversation?: Omit<AgentConversationInput, 'carried' | 'conversationId'>;
  startedBy?: string;
  output?: OutputOption;
}

/** A message without settings for a conversation that does not run: it would have to create it. */
function noConversationSettings(conversationId: string): TurnpikeRejectedError {
  return new TurnpikeRejectedError(
    `Invalid sendMessage: conversation "${conversationId}" is not running, so this message would create it, and creating it needs \`conversation\`, its settings (\`model\` or \`agents\`)`,
    'InvalidRequest',
  );
}

/** Sends a user message, starting the conversation with its first (see `TurnpikeClient.sendMessage`). */
export async function sendMessage(starter: WorkflowStarter, request: Omit<SendMessageInput, 'output'> & Addressed): Promise<SendMessageResult> {
  const { conversationId, conversation, startedBy, output, tenant, priority, ...rest } = request;
  // The tenant and priority the conversation is created with (a running one keeps its own).
  const placement = startPlacement('sendMessage', { ...(tenant !== undefined ? { tenant } : {}), ...(priority !== undefined ? { priority } : {}) }, starter.tenantWeights);
  // Settings the conversation could not run are refused before anything starts.
  const settingsProblem = conversation === undefined ? undefined : agentsProblem(conversation);
  if (settingsProblem) throw new TurnpikeRejectedError(`Invalid conversation settings: ${settingsProblem}`, 'InvalidRequest');
  // This message's turn only: a zod schema is sent as its JSON Schema.
  const given: SendMessageInput = output !== undefined && typeof output === 'object' ? { ...rest, output: toOutputSpec(output) } : { ...rest, ...(output !== undefined ? { output } : {}) };
  // Refused before the conversation starts: one with a bad budget would refuse every message.
  const budget = conversation?.budget !== undefined ? budgetProblem(conversation.budget, "the conversation's budget") : undefined;
  if (budget) throw new TurnpikeRejectedError(`Invalid sendMessage: ${budget}`, 'InvalidRequest');
  const message = Array.isArray(given.content) ? { ...given, content: await storeLargeContent(given.content, starter.contentStore) } : given;
  // The server deduplicates a retried request with the same update id, too.
  const updateId = message.messageId ? { updateId: message.messageId } : {};
  if (conversation === undefined) {
    const running = starter.client.workflow.getHandle<typeof agentConversation>(conversationId);
    return rejections(running.executeUpdate(sendMessageUpdate, { args: [message], ...updateId })).catch((error: unknown) => {
      const notRunning = error instanceof TurnpikeNotFoundError || (error instanceof TurnpikeRejectedError && error.type === 'TurnAlreadyEnded');
      throw notRunning ? noConversationSettings(conversationId) : error;
    });
  }
  // Started with `TurnpikeApprovers` and `TurnpikeNextExpiry` where the namespace has them, so its turns are (client/approvers-attribute.ts).
  return startWithApprovers(starter.client, placement.typedSearchAttributes, (typedSearchAttributes) => {
    const start = new WithStartWorkflowOperation<typeof agentConversation>(AGENT_CONVERSATION_WORKFLOW, {
      workflowId: conversationId,
      taskQueue: starter.taskQueue,
      args: [withModelTaskQueue({ ...conversation, conversationId }, starter.modelTaskQueue)],
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...(startedBy !== undefined ? { memo: { [STARTED_BY_MEMO_KEY]: startedBy } } : {}),
      ...placement,
      ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
    });
    return rejections(
      starter.client.workflow.executeUpdateWithStart(sendMessageUpdate, {
        args: [message],
        ...updateId,
        startWorkflowOperation: start,
      }),
    );
  }).catch(refuseWithoutTenantAttribute('sendMessage'));
}
