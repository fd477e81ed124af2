/**
 * The workflows a turnpike-only worker registers (turns, conversations, the model queues' governor, evaluations and A2A push notifiers): `createWorker` bundles this module. Only
 * workflow functions here, because every function a workflows module exports becomes a
 * workflow type; the public `turnpike/workflows` entry (index.ts) also exports helpers.
 */
export { agentConversation } from './conversation/agent-conversation.js';
export { agentTurn } from './turn/agent-turn.js';
export { modelGovernor } from './capacity/model-governor.js';
export { turnpikeEvaluation } from './evaluation/evaluation-run.js';
export { a2aPushNotifier } from './a2a/a2a-push-notifier.js';
