/**
 * What a conversation makes of a user message before its turn starts: the turn's user message,
 * and the checks that refuse a message its turn could not run (its images and documents, its
 * typed answer). The `sendMessage` validator asks them, so a refused message changes nothing.
 */
import { outputSpecProblem } from '../agents/typed-output.js';
import { binaryPartsProblem } from '../turn/binary-parts.js';
import type { AgentConversationInput, ConversationCarryOver, Message, ModelSettings, SendMessageInput, UserContentPart } from '../types/index.js';
import { activeModel } from './conversation-agents.js';

/** The user message a conversation message becomes: its text, then any parts sent with it. */
export function userMessage(message: { text: string; content?: UserContentPart[] }): Message {
  return { role: 'user', content: message.content ? [{ type: 'text', text: message.text }, ...message.content] : message.text };
}

/**
 * Why a message's images and documents cannot go to its turn, or undefined: each part as a
 * turn's parts are checked (for the model the turn will use), then all inline bytes together
 * with the history's, which the turn receives as well.
 */
export function contentProblem(input: AgentConversationInput, state: ConversationCarryOver, request: SendMessageInput): string | undefined {
  if (!request.content) return undefined;
  const provider = request.options?.model?.provider ?? activeModel(input, state).provider;
  const own = binaryPartsProblem([{ role: 'user', content: request.content }], provider);
  if (own) return own.replace(/^messages\[0\]\./, '').replace(/^messages: /, 'content: ');
  const withHistory = binaryPartsProblem([...state.history, userMessage(request)], provider);
  return withHistory ? `content, with the conversation's history: ${withHistory}` : undefined;
}

/**
 * Why a message's typed answer (`output`) cannot go to its turn, or undefined (typed-output.ts).
 * With agents, any of them may answer the message after a handoff, so it must suit each one's provider.
 */
export function outputProblem(input: AgentConversationInput, state: ConversationCarryOver, request: SendMessageInput): string | undefined {
  if (request.output === undefined) return undefined;
  const own = outputSpecProblem(request.output, request.options?.model?.provider ?? activeModel(input, state).provider);
  if (own) return own;
  for (const [name, agent] of Object.entries(input.agents ?? {})) {
    const problem = outputSpecProblem(request.output, (agent.model as ModelSettings).provider);
    if (problem) return `${problem} (for agent "${name}", which a handoff may give this message)`;
  }
  return undefined;
}
