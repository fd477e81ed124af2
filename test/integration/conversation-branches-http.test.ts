/**
 * Branches over HTTP: useChat's `regenerate()` and an edited message through the `ai` package's
 * own transport on `/api/chat`, and every new route answering 404 to a caller who may not read
 * the conversation or the turn.
 */
import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { useTurnpikeApiWithFakes } from '../support/api-server.js';
import { testTools } from '../support/test-tools.js';

const suite = useTurnpikeApiWithFakes({ tools: testTools }, { tokens: parseTokenMap('alice-token:alice,mallory-token:mallory') });

const model = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256 };

function transport(token = 'alice-token') {
  return new DefaultChatTransport<UIMessage>({ api: `${suite.base}/api/chat`, headers: { authorization: `Bearer ${token}` }, body: { model } });
}

async function chat(chatId: string, messages: UIMessage[], trigger: 'submit-message' | 'regenerate-message' = 'submit-message', messageId?: string): Promise<UIMessage> {
  const stream = await transport().sendMessages({ trigger, chatId, messageId, messages, abortSignal: undefined });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, terminateOnError: true })) last = message;
  return last!;
}

const user = (text: string): UIMessage => ({ id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text }] });
const textOf = (message: UIMessage) => message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');

async function idle(conversationId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await suite.client.conversationState(conversationId);
    if (!state.currentTurn && state.queued.length === 0) return state;
    if (Date.now() > deadline) throw new Error('conversation never went idle');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function as(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${suite.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const answer = (await response.json().catch(() => undefined)) as { current?: string; branches: Array<{ id: string; reason: string }>; messages: unknown[]; error?: { type: string; message: string } };
  return { status: response.status, body: answer };
}

describe('branches over HTTP', () => {
  it("useChat's regenerate() and an edited message start new branches; the old answers stay readable", async () => {
    const chatId = `chat-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'A1' }, { text: 'A2 (old)' }, { text: 'A2 (new)' }, { text: 'A1 (edited)' }]);
    const u1 = user('Q1');
    const a1 = await chat(chatId, [u1]);
    expect(textOf(a1)).toBe('A1');
    await idle(chatId);
    const u2 = user('Q2');
    const a2 = await chat(chatId, [u1, a1, u2]);
    expect(textOf(a2)).toBe('A2 (old)');
    await idle(chatId);

    // What useChat's regenerate() sends: the messages without the last answer.
    const again = await chat(chatId, [u1, a1, u2], 'regenerate-message', a2.id);
    expect(textOf(again)).toBe('A2 (new)');
    await idle(chatId);
    const requests = suite.fake.requests.filter((request) => request.provider === 'openai');
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(JSON.stringify(requests[2].body.messages)).not.toContain('A2 (old)');
    expect((await suite.client.branches(chatId)).current).toBe('branch-1');

    // What useChat's sendMessage({ text, messageId }) sends for an edit of the first message.
    const edited = await chat(chatId, [{ ...u1, parts: [{ type: 'text', text: 'Q1 (edited)' }] }], 'submit-message', u1.id);
    expect(textOf(edited)).toBe('A1 (edited)');
    await idle(chatId);
    expect((suite.fake.requests.filter((request) => request.provider === 'openai').at(-1)!.body.messages as unknown[]).length).toBe(1);
    const listed = await as('alice-token', 'GET', `/api/conversations/${chatId}/branches`);
    expect(listed.status).toBe(200);
    expect(listed.body.current).toBe('branch-2');
    expect(listed.body.branches.map((branch: { id: string; reason: string }) => `${branch.id}:${branch.reason}`)).toEqual(['main:start', 'branch-1:regenerate', 'branch-2:edit']);
    const old = await as('alice-token', 'GET', `/api/conversations/${chatId}/history?branch=main`);
    expect(JSON.stringify(old.body.messages)).toContain('A2 (old)');
    expect((await as('alice-token', 'POST', `/api/conversations/${chatId}/branches/branch-1/current`)).body.current).toBe('branch-1');
  });

  it("useChat's regenerate({ messageId }) of an earlier answer regenerates that answer, not the last", async () => {
    const chatId = `chat-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'A1' }, { text: 'A2' }, { text: 'A3' }, { text: 'A2 (again)' }, { text: 'A2 (third)' }, { text: 'A1 (again)' }]);
    const [u1, u2, u3] = [user('Q1'), user('Q2'), user('Q3')];
    const a1 = await chat(chatId, [u1]);
    await idle(chatId);
    const a2 = await chat(chatId, [u1, a1, u2]);
    await idle(chatId);
    const a3 = await chat(chatId, [u1, a1, u2, a2, u3]);
    expect(textOf(a3)).toBe('A3');
    await idle(chatId);
    const modelSaw = () => {
      const body = suite.fake.requests.filter((request) => request.provider === 'openai').at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
      return body.messages.filter((message) => message.role !== 'system').map((message) => `${message.role}:${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)}`);
    };

    // What useChat's regenerate({ messageId: a2.id }) sends: the messages before that answer, and its id.
    const again = await chat(chatId, [u1, a1, u2], 'regenerate-message', a2.id);
    expect(textOf(again)).toBe('A2 (again)');
    await idle(chatId);
    expect(modelSaw()).toEqual(['user:Q1', 'assistant:A1', 'user:Q2']);
    const branches = await suite.client.branches(chatId);
    expect(branches.current).toBe('branch-1');
    expect(branches.branches.find((branch) => branch.id === 'branch-1')).toMatchObject({ reason: 'regenerate', forkedAt: 3, messages: 4 });
    expect(JSON.stringify((await suite.client.history(chatId)).messages)).not.toContain('Q3');

    // The regenerated answer, named by the id the response gave it; then the first one, named by its user message.
    expect(textOf(await chat(chatId, [u1, a1, u2], 'regenerate-message', again.id))).toBe('A2 (third)');
    await idle(chatId);
    expect(modelSaw()).toEqual(['user:Q1', 'assistant:A1', 'user:Q2']);
    expect(textOf(await chat(chatId, [u1], 'regenerate-message', u1.id))).toBe('A1 (again)');
    await idle(chatId);
    expect(modelSaw()).toEqual(['user:Q1']);
    expect((await suite.client.branches(chatId)).branches).toHaveLength(4);

    // A messageId that names nothing of the request, or a message the chat never had, is refused; nothing is steered.
    const before = suite.fake.requests.length;
    const unknown = await as('alice-token', 'POST', '/api/chat', { id: chatId, trigger: 'regenerate-message', messageId: 'nope', messages: [u1, a1, u2] });
    expect(unknown).toMatchObject({ status: 400, body: { error: { type: 'InvalidRequest', message: `messageId "nope" names neither the request's last message (${JSON.stringify(u2.id)}) nor an answer to it` } } });
    const stranger = user('never sent');
    const unsent = await as('alice-token', 'POST', '/api/chat', { id: chatId, trigger: 'regenerate-message', messageId: stranger.id, messages: [u1, a1, stranger] });
    expect(unsent).toMatchObject({ status: 400, body: { error: { type: 'InvalidRequest', message: `Message ${JSON.stringify(stranger.id)} is not a user message of chat ${JSON.stringify(chatId)}` } } });
    expect((await suite.client.branches(chatId)).branches).toHaveLength(4);
    expect(suite.fake.requests.length).toBe(before);
  });

  it('answers 404 on every new route to a caller who may not read the conversation or the turn', async () => {
    const chatId = `chat-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'A1' }]);
    const u1 = user('Q1');
    await chat(chatId, [u1]);
    await idle(chatId);
    const turnId = `${chatId}/turn-1`;
    const routes: Array<[string, string, unknown?]> = [
      ['POST', `/api/conversations/${chatId}/regenerate`, {}],
      ['POST', `/api/conversations/${chatId}/messages/${u1.id}/edit`, { text: 'mine now' }],
      ['GET', `/api/conversations/${chatId}/branches`],
      ['POST', `/api/conversations/${chatId}/branches/main/current`],
      ['GET', `/api/conversations/${chatId}/history?branch=main`],
      ['POST', `/api/turns/${encodeURIComponent(turnId)}/fork`, { atStep: 1 }],
      ['GET', `/api/turns/${encodeURIComponent(turnId)}/forks`],
      ['GET', `/api/turns/${encodeURIComponent(turnId)}/transcript`],
      ['POST', '/api/chat', { id: chatId, trigger: 'regenerate-message', messages: [{ id: u1.id, role: 'user', parts: [{ type: 'text', text: 'Q1' }] }] }],
    ];
    for (const [method, path, body] of routes) {
      expect((await as('mallory-token', method, path, body)).status, `mallory ${method} ${path}`).toBe(404);
    }
    // Nothing was steered.
    expect((await suite.client.branches(chatId)).branches).toHaveLength(1);
    expect(suite.fake.requests.filter((request) => request.provider === 'openai')).toHaveLength(1);
    // The reader is answered.
    expect((await as('alice-token', 'GET', `/api/conversations/${chatId}/branches`)).status).toBe(200);
    const forks = await as('alice-token', 'GET', `/api/turns/${encodeURIComponent(turnId)}/forks`);
    expect(forks.status).toBe(200);
    expect(forks.body).toEqual({ forks: [] });
    // The turn's whole transcript: the user's message and the answer.
    const transcript = (await as('alice-token', 'GET', `/api/turns/${encodeURIComponent(turnId)}/transcript`)) as unknown as { status: number; body: { turnId: string; messages: unknown[] } };
    expect(transcript.status).toBe(200);
    expect(transcript.body).toEqual({ turnId, messages: JSON.parse(JSON.stringify(await suite.client.turnTranscript(turnId))) });
    expect(JSON.stringify(transcript.body.messages)).toContain('A1');
  });
});
