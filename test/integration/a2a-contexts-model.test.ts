/**
 * What the model is sent for a later task of an A2A context, against the strict fake Anthropic
 * API, driven only by `@a2a-js/sdk`'s own client: the first task's user message and answer,
 * then the new message.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { a2aClient, sendTask as sendTo } from '../support/a2a-client.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { startContentTurnpike, type ContentTurnpike } from '../support/content-fixtures.js';

let context: ContentTurnpike;
let api: FastifyInstance;
let alice: Client;

beforeAll(async () => {
  context = await startContentTurnpike([]);
  api = await buildApi({
    client: context.client,
    tokens: parseTokenMap('alice-token:alice'),
    a2a: { agents: { clerk: { description: 'Answers questions', model: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, system: 'You are the clerk.', tools: [] } } },
  });
  const base = await api.listen({ host: '127.0.0.1', port: 0 });
  alice = await a2aClient(`${base}/api/a2a/clerk/`, 'alice-token');
});
afterAll(async () => {
  await api?.close();
  await context?.stop();
});

function message(words: string, contextId = ''): Message {
  return { messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: words }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const sendTask = (sent: Message): Promise<Task> => sendTo(alice, sent);

/** A recorded Anthropic request's messages, each as its role and its text. */
function conversationSent(body: unknown): Array<{ role: string; text: string }> {
  const messages = (body as { messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }> }).messages;
  return messages.map((entry) => ({ role: entry.role, text: typeof entry.content === 'string' ? entry.content : entry.content.map((block) => block.text ?? `<${block.type}>`).join('') }));
}

describe('A2A contexts, as the model sees them', () => {
  it('sends the second task’s model the first task’s message and answer, then the new message', async () => {
    context.fake.reset();
    context.fake.script('anthropic', [{ text: 'Order 1001 ships on Monday.' }, { text: 'It ships from Lyon.' }]);
    const first = await sendTask(message('When does order 1001 ship?'));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = await sendTask(message('And from where?', first.contextId));
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    const requests = context.fake.requests.filter((request) => request.provider === 'anthropic');
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
