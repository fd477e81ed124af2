/**
 * The workflows a turnpike-only worker registers: `createWorker` bundles this module. Only
 * workflow functions here, because every function a workflows module exports becomes a
 * workflow type; the public `turnpike/workflows` entry (index.ts) also exports helpers.
 */
export { agentConversation } from './conversation/agent-conversation.js';
export { agentTurn } from './turn/agent-turn.js';
export { turnpikeEvaluation } from './evaluation/evaluation-run.js';
