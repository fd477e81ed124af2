/**
 * Steering a conversation from the client: regenerate an answer, edit a user message and send it
 * again, list the branches and make one current (docs/conversations.md, "Branches"). Each is one
 * update or query of the conversation; refusals come back as `TurnpikeRejectedError`.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { branchesQuery, editMessageUpdate, regenerateUpdate, switchBranchUpdate } from '../workflows/messages/definitions.js';
import type { agentConversation } from '../workflows/registered-workflows.js';
import type { BranchTurnResult, ConversationBranches, EditMessageInput, RegenerateInput } from '../workflows/types/index.js';
import type { ContentStore } from '../content/content-store.js';
import { storeLargeContent } from '../content/stored-content.js';
import { rejections } from './rejections.js';

type Conversation = WorkflowHandle<typeof agentConversation>;

export async function regenerate(conversation: Conversation, request: RegenerateInput = {}): Promise<BranchTurnResult> {
  return rejections(conversation.executeUpdate(regenerateUpdate, { args: [request] }));
}

export async function editMessage(conversation: Conversation, request: EditMessageInput, store: ContentStore): Promise<BranchTurnResult> {
  // Large images and documents go to the content store, as sendMessage's do.
  const message = Array.isArray(request.content) ? { ...request, content: await storeLargeContent(request.content, store) } : request;
  return rejections(conversation.executeUpdate(editMessageUpdate, { args: [message] }));
}

export async function branches(conversation: Conversation): Promise<ConversationBranches> {
  return rejections(conversation.query(branchesQuery));
}

export async function switchBranch(conversation: Conversation, branch: string): Promise<ConversationBranches> {
  return rejections(conversation.executeUpdate(switchBranchUpdate, { args: [{ branch }] }));
}
