/** The workflows a turnpike worker registers. */
export { agentConversation } from './agent-conversation.js';
export { agentTurn } from './agent-turn.js';
