/**
 * Provider-neutral types shared by the workflows, the activities and the client, one concept a
 * file under `types/`. Pure types: nothing here runs. The wire contract is docs/contract.md.
 */
export type { EndedTurnStatus, TurnStatus } from './turn-statuses.js';
export type * from './messages.js';
export type * from './model.js';
export type * from './tools.js';
export type * from './model-step.js';
export type * from './turn.js';
export type * from './fork.js';
export type * from './call-records.js';
export type * from './parked-calls.js';
export type * from './agent-tools.js';
export type * from './conversation.js';
export type * from './conversation-branches.js';
export type * from './budget.js';
export type * from './tenant-budget.js';
export type * from './approval-rules.js';
