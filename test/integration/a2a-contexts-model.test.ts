/**
 * What the model is sent for a later task of an A2A context, against the strict fake Anthropic
 * API, driven only by `@a2a-js/sdk`'s own client: the first task's user message and answer,
 * then the new message.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { sendTask as sendTo } from '../support/a2a-client.js';
import { describe, expect, it } from 'vitest';
import { useA2aContentAgent } from '../support/a2a-content-agent.js';

const served = useA2aContentAgent('clerk', { description: 'Answers questions', model: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, system: 'You are the clerk.', tools: [] });

function message(words: string, contextId = ''): Message {
  return { messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: words }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const sendTask = (sent: Message): Promise<Task> => sendTo(served.alice, sent);

/** A recorded Anthropic request's messages, each as its role and its text. */
function conversationSent(body: unknown): Array<{ role: string; text: string }> {
  const messages = (body as { messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }> }).messages;
  return messages.map((entry) => ({ role: entry.role, text: typeof entry.content === 'string' ? entry.content : entry.content.map((block) => block.text ?? `<${block.type}>`).join('') }));
}

describe('A2A contexts, as the model sees them', () => {
  it('sends the second task’s model the first task’s message and answer, then the new message', async () => {
    served.context.fake.reset();
    served.context.fake.script('anthropic', [{ text: 'Order 1001 ships on Monday.' }, { text: 'It ships from Lyon.' }]);
    const first = await sendTask(message('When does order 1001 ship?'));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = await sendTask(message('And from where?', first.contextId));
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    const requests = served.context.fake.requests.filter((request) => request.provider === 'anthropic');
    expect(requests.map((request) => request.errors)).toEqual([[], []]);
    expect(conversationSent(requests[0]!.body)).toEqual([{ role: 'user', text: 'When does order 1001 ship?' }]);
    expect(conversationSent(requests[1]!.body)).toEqual([
      { role: 'user', text: 'When does order 1001 ship?' },
      { role: 'assistant', text: 'Order 1001 ships on Monday.' },
      { role: 'user', text: 'And from where?' },
    ]);
    // The later task runs with the agent's settings too.
    expect(JSON.stringify((requests[1]!.body as { system?: unknown }).system)).toContain('You are the clerk.');
  });
});
