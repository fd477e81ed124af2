/**
 * Provider-neutral types shared by the workflows, the activities and the client, one concept a
 * file under `types/`. Pure types: nothing here runs. The wire contract is docs/contract.md.
 */
export type { EndedTurnStatus, TurnStatus } from './turn-statuses.js';
export type * from './types/messages.js';
export type * from './types/model.js';
export type * from './types/tools.js';
export type * from './types/model-step.js';
export type * from './types/turn.js';
export type * from './types/agent-tools.js';
export type * from './types/conversation.js';
export type * from './types/budget.js';
