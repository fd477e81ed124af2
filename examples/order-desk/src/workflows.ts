/** The worker's workflows: the application's own, and turnpike's (one re-export line). */
export { agentTurn, agentConversation } from 'turnpike/workflows';
export { refundOrder } from './order-workflow.js';
