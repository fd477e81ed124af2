/**
 * `/api/chat` continued after a decision (docs/streaming.md, "The live channel"), through the
 * `ai` package's own transport and reader: a step's two parallel calls, whose inputs streamed
 * before the step parked, and the next step streamed live. The message the AI SDK builds holds
 * one tool part per call, each with its output, and each step's text once: after an approval
 * that parked one call while the other ran, and after a budget decision that let both run while
 * every durable read of the API was held, so that the next step's live text came first.
 */
import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InProcessLiveDeltas } from '../../activities/live-deltas.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { words } from '../support/live-view.js';
import { serveApi } from '../support/api-server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const MODEL = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 } as const;
const FIRST = words(20, 'a');
const SECOND = words(40, 'b');

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
const channel = new InProcessLiveDeltas();
const apis: FastifyInstance[] = [];

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools, liveDeltas: channel });
});
afterAll(async () => {
  for (const api of apis) await api.close();
  await turnpike?.stop();
  await fake?.restore();
});
beforeEach(() => fake.reset());

/**
 * A client whose stream reads (`turnEvents` queries) are held from the first decision it sends
 * (`approveToolCall`) until `open()`: what that decision makes the turn publish durably reaches
 * the API only then, while the next step's text comes through the live channel.
 */
function heldFromDecision(): { open: () => void; client: Client } {
  let held: Promise<void> = Promise.resolve();
  let release = () => {};
  const client = new Client({
    connection: turnpike.client.connection,
    namespace: turnpike.client.options.namespace,
    dataConverter: turnpike.client.options.dataConverter,
    interceptors: {
      workflow: [
        {
          query: async (input, next) => {
            if (input.queryType === 'turnEvents') await held;
            return next(input);
          },
          startUpdate: async (input, next) => {
            if (input.updateName === 'approveToolCall') held = new Promise<void>((resolve) => (release = resolve));
            return next(input);
          },
        },
      ],
    },
  });
  return { client, open: () => release() };
}

/** The HTTP API over a TurnpikeClient on `temporal`, reading live through the worker's channel (or not). */
async function serve(temporal: Client, live: boolean): Promise<{ base: string; client: TurnpikeClient }> {
  const client = new TurnpikeClient({ client: temporal, taskQueue: turnpike.taskQueue, ...(live ? { liveDeltas: channel } : {}) });
  const served = await serveApi(turnpike, { client });
  apis.push(served.api);
  return { base: served.base, client };
}

interface Read {
  message: UIMessage;
  chunks: UIMessageChunk[];
  errors: string[];
}

/** Sends as useChat does and reads the response as it does, continuing `continuing`; `onChunk` sees each chunk as it arrives. */
async function send(base: string, chatId: string, messages: UIMessage[], options: { body?: object; continuing?: UIMessage; onChunk?: (chunk: UIMessageChunk) => void } = {}): Promise<Read> {
  const transport = new DefaultChatTransport<UIMessage>({ api: `${base}/api/chat`, headers: { authorization: 'Bearer alice-token' }, body: { model: MODEL, ...options.body } });
  const stream = await transport.sendMessages({ trigger: 'submit-message', chatId, messageId: undefined, messages, abortSignal: undefined });
  const chunks: UIMessageChunk[] = [];
  const watched = stream.pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      transform(chunk, controller) {
        chunks.push(chunk);
        options.onChunk?.(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  const errors: string[] = [];
  let last: UIMessage | undefined;
  const reader = readUIMessageStream<UIMessage>({ stream: watched, ...(options.continuing ? { message: structuredClone(options.continuing) } : {}), onError: (error) => errors.push(String(error)) });
  for await (const message of reader) last = structuredClone(message);
  return { message: last!, chunks, errors };
}

type ToolPart = { type: string; toolCallId: string; state: string; output?: unknown; approval?: { id: string; approved?: boolean } };
const toolParts = (message: UIMessage) => message.parts.filter((part) => part.type.startsWith('tool-')) as unknown as ToolPart[];
const texts = (message: UIMessage) => message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));

/** What addToolApprovalResponse does to the message: the parked call's part, approved. */
function approve(message: UIMessage): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) => {
      const tool = part as unknown as ToolPart;
      return tool.state === 'approval-requested' ? ({ ...part, state: 'approval-responded', approval: { ...tool.approval, approved: true } } as UIMessage['parts'][number]) : part;
    }),
  };
}

/** Each call of the turn once among the message's tool parts, each with its output; each step's text once. */
async function expectOnePartPerCall(client: TurnpikeClient, turnId: string, message: UIMessage): Promise<void> {
  const result = await client.turnResult(turnId);
  expect(result).toMatchObject({ status: 'completed', text: SECOND });
  const calls = result.toolCalls.map((call) => call.toolCallId).sort();
  expect(calls).toHaveLength(2);
  const parts = toolParts(message);
  expect(parts.map((part) => part.toolCallId).sort()).toEqual(calls);
  for (const part of parts) expect(part).toMatchObject({ state: 'output-available', output: expect.anything() });
  expect(texts(message)).toEqual([FIRST, SECOND]);
}

describe('/api/chat continued after a decision, the next step read live', () => {
  for (const live of [true, false]) {
    it(`shows each of a parked step's parallel calls once, with its output, and each step's text once (${live ? 'live' : 'durable only'})`, async () => {
      const { base, client } = await serve(turnpike.client, live);
      // The parked call first: its approval request ends the first response before the other call's `tool-call`.
      fake.script('openai', [
        {
          text: FIRST,
          toolCalls: [
            { name: 'guarded_action', input: { target: 'alpha', count: 2 } },
            { name: 'record_action', input: { action: 'beta' } },
          ],
          stream: { eventIntervalMs: 5 },
        },
        { text: SECOND, stream: { eventIntervalMs: 10 } },
      ]);
      const chatId = `chat-${randomUUID()}`;
      const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Guard alpha and record beta.' }] };
      const asked = await send(base, chatId, [user]);
      expect(asked.errors).toEqual([]);
      // Both calls' inputs streamed; the second call's part waits for its input.
      expect(toolParts(asked.message).map((part) => [part.type, part.state])).toEqual([
        ['tool-guarded_action', 'approval-requested'],
        ['tool-record_action', 'input-streaming'],
      ]);

      const responded = approve(asked.message);
      const answered = await send(base, chatId, [user, responded], { continuing: responded });
      expect(answered.errors).toEqual([]);
      await expectOnePartPerCall(client, `${chatId}/turn-1`, answered.message);
    });
  }

  it("keeps the next step's live text behind the calls a budget decision let run, while the durable stream is held", async () => {
    const gate = heldFromDecision();
    const { base, client } = await serve(gate.client, true);
    fake.script('openai', [
      {
        text: FIRST,
        toolCalls: [
          { name: 'record_action', input: { action: 'gamma' } },
          { name: 'record_action', input: { action: 'delta' } },
        ],
        stream: { eventIntervalMs: 5 },
      },
      { text: SECOND, stream: { eventIntervalMs: 10 } },
    ]);
    const chatId = `chat-${randomUUID()}`;
    const turnId = `${chatId}/turn-1`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Record gamma and delta.' }] };
    // One call allowed: the step's two calls wait for a budget decision before they run (their `tool-call`s too).
    const asked = await send(base, chatId, [user], { body: { budget: { toolCalls: 1 } } });
    expect(asked.errors).toEqual([]);
    expect(toolParts(asked.message).map((part) => part.state)).toEqual(['input-streaming', 'input-streaming']);
    const responded: UIMessage = {
      ...asked.message,
      parts: asked.message.parts.map((part) =>
        part.type === 'data-budget' ? ({ ...part, data: { ...(part as { data: object }).data, state: 'responded', response: { approved: true } } } as UIMessage['parts'][number]) : part,
      ),
    };
    let text = '';
    const answering = send(base, chatId, [user, responded], {
      continuing: responded,
      onChunk: (chunk) => {
        if (chunk.type === 'text-delta') text += chunk.delta;
      },
    });
    // The turn ends with every durable read of the API held since the decision: only the live
    // channel has brought the second step's text; the calls' `tool-call`s come after it.
    await turnpike.client.workflow.getHandle(turnId).result();
    gate.open();
    const answered = await answering;
    expect(answered.errors).toEqual([]);
    expect(text).toBe(SECOND);
    await expectOnePartPerCall(client, turnId, answered.message);
  });
});
