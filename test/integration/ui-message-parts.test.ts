/**
 * The data parts of `POST /api/chat` (docs/streaming.md), read by the `ai` package's own client
 * side (`DefaultChatTransport`, `readUIMessageStream`, `validateUIMessages`) over a real socket,
 * against a real dev server and the strict fake OpenAI server through the real SDK: a budget
 * approval is a `data-budget` part the client decides (extend or stop) and that its decision
 * replaces in place, never a tool part; a typed answer is a `data-output` part, partial objects
 * while the model writes it, then the validated object, or the errors of an invalid one.
 */
import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, validateUIMessages, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toOutputSpec } from '../../client/index.js';
import { testTools } from '../support/test-tools.js';
import { useTurnpikeApiWithFakes } from '../support/api-server.js';

const suite = useTurnpikeApiWithFakes({ tools: testTools });

const model = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 };
const Trip = z.object({ city: z.string(), days: z.number() });
const TRIP_SCHEMA = toOutputSpec({ schema: Trip }).schema;

type DataPart = { type: string; id?: string; data: Record<string, unknown> };

interface Read {
  message: UIMessage;
  chunks: UIMessageChunk[];
  errors: string[];
}

/**
 * Sends as useChat does (the body's extra fields as `useChat`'s request `body`) and reads the
 * response as it does, continuing `continuing` when given; `onMessage` sees every message state.
 */
async function send(chatId: string, messages: UIMessage[], options: { body?: object; continuing?: UIMessage; onMessage?: (message: UIMessage) => void } = {}): Promise<Read> {
  const transport = new DefaultChatTransport<UIMessage>({ api: `${suite.base}/api/chat`, headers: { authorization: 'Bearer alice-token' } });
  const stream = await transport.sendMessages({ trigger: 'submit-message', chatId, messageId: undefined, messages, abortSignal: undefined, ...(options.body ? { body: options.body } : {}) });
  const [forMessage, forChunks] = stream.tee();
  const chunks: UIMessageChunk[] = [];
  const collected = (async () => {
    for await (const chunk of forChunks) chunks.push(chunk);
  })();
  const errors: string[] = [];
  let last: UIMessage | undefined;
  const reader = readUIMessageStream<UIMessage>({ stream: forMessage, ...(options.continuing ? { message: options.continuing } : {}), onError: (error) => errors.push(String(error)) });
  for await (const message of reader) {
    last = structuredClone(message);
    options.onMessage?.(last);
  }
  await collected;
  return { message: last!, chunks, errors };
}

const dataParts = (message: UIMessage, type: string) => message.parts.filter((part) => part.type === type) as unknown as DataPart[];

/** A valid UIMessage, as the ai package checks one, with no tool part for the budget. */
async function expectValid(messages: UIMessage[]): Promise<void> {
  await validateUIMessages({ messages });
  const last = messages.at(-1)!;
  expect(last.parts.filter((part) => 'toolCallId' in part && (part.toolCallId as string).startsWith('budget-'))).toEqual([]);
  expect(JSON.stringify(last.parts.filter((part) => part.type.startsWith('tool-')))).not.toContain('turnpike_budget');
}

/** What an app does to decide a budget approval: set its part to `responded` before `sendMessage()`. */
function respond(message: UIMessage, response: { approved: boolean; extendBy?: Record<string, number>; reason?: string }): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) => (part.type === 'data-budget' ? ({ ...part, data: { ...(part as unknown as DataPart).data, state: 'responded', response } } as UIMessage['parts'][number]) : part)),
  };
}

describe('a budget approval in the UI message stream', () => {
  async function askForBudget(): Promise<{ chatId: string; user: UIMessage; asked: UIMessage }> {
    suite.fake.script('openai', [{ toolCalls: [{ name: 'lookup_order', input: { orderId: '1001' } }] }, { text: 'Order 1001 was delivered.' }]);
    const chatId = `chat-${randomUUID()}`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Where is order 1001?' }] };
    // One model step (15 tokens at the fake's default usage) reaches the limit.
    const { message: asked, errors } = await send(chatId, [user], { body: { model, budget: { totalTokens: 10 } } });
    expect(errors).toEqual([]);
    await expectValid([user, asked]);
    return { chatId, user, asked };
  }

  it('asks in a data-budget part; extending it from the client shows the decision in place and the turn completes', async () => {
    const { chatId, user, asked } = await askForBudget();
    const [request] = dataParts(asked, 'data-budget');
    const { pending } = await suite.client.turnState(`${chatId}/turn-1`);
    expect(pending).toHaveLength(1);
    expect(request).toEqual({
      type: 'data-budget',
      id: pending[0].approvalId,
      data: expect.objectContaining({ state: 'requested', approvalId: pending[0].approvalId, toolCallId: 'budget-1', inputHash: pending[0].inputHash, input: pending[0].input }),
    });
    expect(asked.parts.find((part) => part.type === 'tool-lookup_order')).toMatchObject({ state: 'output-available' });

    const responded = respond(asked, { approved: true, extendBy: { totalTokens: 1_000 } });
    const { message: answered, errors } = await send(chatId, [user, responded], { continuing: responded });
    expect(errors).toEqual([]);
    await expectValid([user, answered]);
    // The decision replaced the request: still one budget part, at the same place.
    expect(dataParts(answered, 'data-budget')).toEqual([
      { type: 'data-budget', id: request.id, data: expect.objectContaining({ state: 'decided', approvalId: request.id, toolCallId: 'budget-1', outcome: 'approved', approver: 'alice', extendBy: { totalTokens: 1_000 } }) },
    ]);
    expect(answered.parts.findIndex((part) => part.type === 'data-budget')).toBe(asked.parts.findIndex((part) => part.type === 'data-budget'));
    const text = answered.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    expect(text).toBe('Order 1001 was delivered.');
    const result = await suite.client.turnResult(`${chatId}/turn-1`);
    expect(result).toMatchObject({ status: 'completed', budget: { totalTokens: 1_010 } });
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'approved', approver: 'alice', editedInput: { extendBy: { totalTokens: 1_000 } } })]);
  });

  it('stops the turn when the client says stop: the part says denied, and the stream ends with a valid message', async () => {
    const { chatId, user, asked } = await askForBudget();
    const responded = respond(asked, { approved: false, reason: 'enough' });
    const { message: stopped, chunks, errors } = await send(chatId, [user, responded], { continuing: responded });
    expect(errors).toEqual([]);
    await expectValid([user, stopped]);
    expect(dataParts(stopped, 'data-budget')).toEqual([{ type: 'data-budget', id: expect.any(String), data: expect.objectContaining({ state: 'decided', outcome: 'denied', approver: 'alice', reason: 'enough' }) }]);
    expect(dataParts(stopped, 'data-budget')[0].data).not.toHaveProperty('extendBy');
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'other' });
    expect(await suite.client.turnResult(`${chatId}/turn-1`)).toMatchObject({ status: 'budget-exceeded', decisions: [expect.objectContaining({ outcome: 'denied', approver: 'alice' })] });
  });

  it('refuses a budget decision for an input other than the one shown, and keeps the approval parked', async () => {
    const { chatId, user, asked } = await askForBudget();
    const forged = respond(asked, { approved: true });
    const part = forged.parts.find((candidate) => candidate.type === 'data-budget') as unknown as DataPart;
    part.data.input = { ...(part.data.input as object), extendBy: { totalTokens: 1_000_000 } };
    const response = await fetch(`${suite.base}/api/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ id: chatId, messages: [user, forged] }),
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('InputHashMismatch');
    const malformed = respond(asked, { approved: 'yes' } as never);
    const refused = await fetch(`${suite.base}/api/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ id: chatId, messages: [user, malformed] }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/data-budget part is not a budget decision: data\.response\.approved/);
    const unknown = respond(asked, { approved: true });
    (unknown.parts.find((candidate) => candidate.type === 'data-budget') as unknown as DataPart).data.approvalId = 'apr_not-this-turns';
    const notAsked = await fetch(`${suite.base}/api/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ id: chatId, messages: [user, unknown] }),
    });
    expect(notAsked.status).toBe(400);
    expect(((await notAsked.json()) as { error: { message: string } }).error.message).toBe('The current turn asked for no budget approval apr_not-this-turns');
    expect((await suite.client.turnState(`${chatId}/turn-1`)).pending).toHaveLength(1);
  });
});

describe('a typed answer in the UI message stream', () => {
  it('streams partial objects in one data-output part, then the validated object', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The fake holds its stream after the opening events and `{"city": "Lisbon", `.
    suite.fake.script('openai', [{ text: '{"city": "Lisbon", "days": 4}', stream: { pauseAfterEvents: 3, resume: released } }]);
    const chatId = `chat-${randomUUID()}`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Plan a trip.' }] };
    const seen: unknown[] = [];
    let turnRunningAtPartial: string | undefined;
    const { message, errors } = await send(chatId, [user], {
      body: { model, output: { schema: TRIP_SCHEMA } },
      onMessage: (current) => {
        const [output] = dataParts(current, 'data-output');
        if (!output) return;
        if (JSON.stringify(seen.at(-1)) !== JSON.stringify(output.data)) seen.push(output.data);
        const partial = output.data.partial as { city?: string; days?: number } | undefined;
        if (partial?.city === 'Lisbon' && partial.days === undefined && turnRunningAtPartial === undefined) {
          turnRunningAtPartial = 'pending';
          void suite.client
            .turnState(`${chatId}/turn-1`)
            .then((state) => (turnRunningAtPartial = state.status))
            .finally(release);
        }
      },
    });
    expect(errors).toEqual([]);
    await expectValid([user, message]);
    // While the fake held the rest of the answer, the message showed a partial object.
    expect(turnRunningAtPartial).toBe('running');
    expect(seen).toContainEqual({ state: 'streaming', step: 1, partial: { city: 'Lisbon' } });
    expect(seen.at(-1)).toEqual({ state: 'done', output: { city: 'Lisbon', days: 4 } });
    expect(dataParts(message, 'data-output')).toEqual([{ type: 'data-output', id: 'output', data: { state: 'done', output: { city: 'Lisbon', days: 4 } } }]);
    // The answer's text stays in the message too.
    expect(message.parts.find((part) => part.type === 'text')).toMatchObject({ text: '{"city": "Lisbon", "days": 4}' });
    expect(suite.fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });

  it('keeps streaming the typed answer in the same part after a tool approval the client sends back', async () => {
    suite.fake.script('openai', [{ toolCalls: [{ name: 'guarded_action', input: { target: 'trip', count: 1 } }] }, { json: { city: 'Lisbon', days: 4 } }]);
    const chatId = `chat-${randomUUID()}`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Plan a trip.' }] };
    const { message: asked } = await send(chatId, [user], { body: { model, output: { schema: TRIP_SCHEMA } } });
    expect(dataParts(asked, 'data-output')).toEqual([{ type: 'data-output', id: 'output', data: { state: 'streaming' } }]);
    const toolPart = asked.parts.find((part) => part.type === 'tool-guarded_action') as Extract<UIMessage['parts'][number], { toolCallId: string }> & { approval: { id: string } };
    expect(toolPart).toMatchObject({ state: 'approval-requested' });
    const responded: UIMessage = {
      ...asked,
      parts: asked.parts.map((part) => (part === toolPart ? ({ ...toolPart, state: 'approval-responded', approval: { id: toolPart.approval.id, approved: true } } as UIMessage['parts'][number]) : part)),
    };
    const partials: unknown[] = [];
    const onMessage = (current: UIMessage) => {
      const data = dataParts(current, 'data-output')[0]?.data;
      if (data?.partial) partials.push(data.partial);
    };
    const { message: answered, errors } = await send(chatId, [user, responded], { continuing: responded, onMessage });
    expect(errors).toEqual([]);
    await expectValid([user, answered]);
    // The continued message held the data-output part: the answer streamed as partial objects there too.
    expect(partials.at(-1)).toEqual({ city: 'Lisbon', days: 4 });
    expect(dataParts(answered, 'data-output')).toEqual([{ type: 'data-output', id: 'output', data: { state: 'done', output: { city: 'Lisbon', days: 4 } } }]);
    expect(answered.parts.find((part) => part.type === 'tool-guarded_action')).toMatchObject({ state: 'output-available' });
  });

  it('ends an invalid-output turn with the errors in the data part, an error and finishReason error', async () => {
    suite.fake.script('openai', [{ text: '{"city": "Lisbon"}' }]);
    const chatId = `chat-${randomUUID()}`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Plan a trip.' }] };
    const { message, chunks, errors } = await send(chatId, [user], { body: { model, output: { schema: TRIP_SCHEMA, maxRetries: 0 } } });
    await expectValid([user, message]);
    const outputErrors = ['days: Invalid input: expected number, received undefined'];
    expect(dataParts(message, 'data-output')).toEqual([{ type: 'data-output', id: 'output', data: { state: 'invalid', text: '{"city": "Lisbon"}', errors: outputErrors } }]);
    expect(errors).toEqual([`Error: The answer did not match the output schema (invalid-output): ${outputErrors[0]}`]);
    expect(chunks.slice(-2)).toEqual([
      { type: 'error', errorText: `The answer did not match the output schema (invalid-output): ${outputErrors[0]}` },
      { type: 'finish', finishReason: 'error' },
    ]);
    expect(await suite.client.turnResult(`${chatId}/turn-1`)).toMatchObject({ status: 'invalid-output', outputErrors });
  });
});
