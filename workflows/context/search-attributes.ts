/**
 * turnpike's search attributes: kept current by the workflows so operators can find parked
 * work with `temporal workflow list --query 'AgentTurnStatus="awaiting-input"'`.
 * Side-effect free: imported by workflows, the client, the dev-server script and tests.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const agentTurnStatusKey = defineSearchAttributeKey('AgentTurnStatus', SearchAttributeType.KEYWORD);
export const agentPendingToolsKey = defineSearchAttributeKey('AgentPendingTools', SearchAttributeType.KEYWORD_LIST);
export const agentConversationIdKey = defineSearchAttributeKey('AgentConversationId', SearchAttributeType.KEYWORD);
/** Set on the child turn of an agent tool call: its parent turn's workflow id. */
export const turnpikeParentTurnIdKey = defineSearchAttributeKey('TurnpikeParentTurnId', SearchAttributeType.KEYWORD);
/** Set by `forkTurn` when it starts a fork: the workflow id of the turn it was forked from. */
export const turnpikeForkOfKey = defineSearchAttributeKey('TurnpikeForkOf', SearchAttributeType.KEYWORD);
/**
 * The tenant a turn or a conversation runs for, set by the client that starts it and passed on to
 * its child turns, hand-overs and forks; also the fairness key of its tasks (client/tenants.ts).
 */
export const turnpikeTenantKey = defineSearchAttributeKey('TurnpikeTenant', SearchAttributeType.KEYWORD);
/** Who may decide what the turn has parked (`approver-values.ts`): what an approver's listing filters by. */
export const turnpikeApproversKey = defineSearchAttributeKey('TurnpikeApprovers', SearchAttributeType.KEYWORD_LIST);
/** When the soonest decision the turn has parked expires (`next-expiry.ts`): what an approver's listing pages by. */
export const turnpikeNextExpiryKey = defineSearchAttributeKey('TurnpikeNextExpiry', SearchAttributeType.DATETIME);

/** Names and types as `temporal operator search-attribute create` and `start-dev` spell them. */
export const SEARCH_ATTRIBUTE_TYPES = {
  AgentTurnStatus: 'Keyword',
  AgentPendingTools: 'KeywordList',
  AgentConversationId: 'Keyword',
  TurnpikeParentTurnId: 'Keyword',
  TurnpikeForkOf: 'Keyword',
  TurnpikeTenant: 'Keyword',
  TurnpikeApprovers: 'KeywordList',
  TurnpikeNextExpiry: 'Datetime',
} as const;
