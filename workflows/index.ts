/** The workflows a turnpike worker registers. */
export { agentTurn } from './agent-turn.js';
