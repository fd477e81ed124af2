/**
 * Conversation messages with images and documents (`sendMessage`'s `content`) on the real dev
 * server: the parts reach the model in its wire format and stay in the conversation's history,
 * and a part the turn could not take is refused at the update, leaving the conversation as it was.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { MAX_STORED_PART_BYTES } from '../../workflows/turn/binary-parts.js';
import type { AgentConversationInput, ModelSettings, UserContentPart } from '../../workflows/types/index.js';
import { noteStarted } from '../support/history-recorder.js';
import { testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });

const openai: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini' };
const conversation: Omit<AgentConversationInput, 'carried' | 'conversationId'> = { model: openai, modelCallOptions: { retry: { initialInterval: '50ms', maximumAttempts: 2 } } };

/** A 1×1 PNG. */
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const image: UserContentPart = { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: png } };
const wireImage = { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } };

async function send(request: Parameters<TurnpikeClient['sendMessage']>[0]) {
  const reply = await suite.client.sendMessage(request);
  if (reply.turnNumber === 1) noteStarted(suite.client.conversation(request.conversationId));
  noteStarted(suite.client.turn(reply.turnWorkflowId));
  return reply;
}

async function waitForIdle(conversationId: string, turns: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const state = await suite.client.conversationState(conversationId).catch(() => undefined);
    if (state && state.turns === turns && !state.currentTurn && state.queued.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`conversation ${conversationId} never absorbed ${turns} turns`);
}

function userMessagesSent(index: number) {
  const body = suite.fake.requests.filter((request) => request.provider === 'openai')[index]!.body as { messages: Array<{ role: string; content: unknown }> };
  return body.messages.filter((message) => message.role === 'user').map((message) => message.content);
}

describe('conversation messages with images and documents', () => {
  it('sends a message’s image to the model in its wire format, and keeps it in the history for later turns', async () => {
    const conversationId = `conv-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'A coffee for $4.' }, { text: 'It was paid by card.' }]);

    const first = await send({ conversationId, text: 'What is on this receipt?', content: [image], conversation });
    expect((await suite.client.turnResult(first.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 })).text).toBe('A coffee for $4.');
    await waitForIdle(conversationId, 1);
    const second = await send({ conversationId, text: 'How was it paid?', conversation });
    expect((await suite.client.turnResult(second.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 })).text).toBe('It was paid by card.');
    await waitForIdle(conversationId, 2);

    expect(suite.fake.requests.map((request) => request.errors)).toEqual([[], []]);
    expect(userMessagesSent(0)).toEqual([[{ type: 'text', text: 'What is on this receipt?' }, wireImage]]);
    // The next turn carries the image in its history, and the new message as plain text.
    expect(userMessagesSent(1)).toEqual([[{ type: 'text', text: 'What is on this receipt?' }, wireImage], 'How was it paid?']);
    const { messages } = await suite.client.history(conversationId);
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'What is on this receipt?' }, image],
      'How was it paid?',
    ]);
  });

  it('refuses an oversized image, a part of an unknown type and a document the model cannot take, leaving the conversation unchanged', async () => {
    const conversationId = `conv-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'Hello.' }]);
    const first = await send({ conversationId, text: 'Hi', conversation });
    await suite.client.turnResult(first.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
    await waitForIdle(conversationId, 1);
    const before = { state: await suite.client.conversationState(conversationId), history: await suite.client.history(conversationId) };

    const refusal = async (content: unknown[]) => {
      const error = await send({ conversationId, text: 'Look at this.', content: content as UserContentPart[], conversation }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TurnpikeRejectedError);
      return (error as TurnpikeRejectedError).message;
    };
    // Inline parts of 128 KiB or more are stored by the suite.client and go by reference; one over the limit is refused.
    const tooLarge = { type: 'stored' as const, ref: `sha256:${'0'.repeat(64)}`, mediaType: 'image/png', bytes: MAX_STORED_PART_BYTES + 1 };
    expect(await refusal([{ type: 'image', source: tooLarge }])).toBe(
      `Invalid sendMessage: content[0].source is ${MAX_STORED_PART_BYTES + 1} bytes; a stored image or document may be at most ${MAX_STORED_PART_BYTES} bytes`,
    );
    expect(await refusal([image, { type: 'audio', data: 'AAAA' }])).toMatch(/^Invalid sendMessage: content\.1/);
    expect(await refusal([{ type: 'document', source: { type: 'url', url: 'https://example.com/terms.pdf' } }])).toMatch(
      /^Invalid sendMessage: content\[0\]: OpenAI Chat Completions takes documents inline only/,
    );

    expect(await suite.client.conversationState(conversationId)).toEqual(before.state);
    expect(await suite.client.history(conversationId)).toEqual(before.history);
    expect(suite.fake.requests).toHaveLength(1);
  });
});
