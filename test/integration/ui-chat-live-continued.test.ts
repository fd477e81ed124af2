/**
 * `/api/chat` read live, continued after an approval (docs/streaming.md, "The live channel"): a
 * step that makes two parallel calls, one parked for a person and one run at once, approved
 * through the `ai` package's own transport; the next step streams live. The message the AI SDK's
 * reader builds holds one tool part per call, each with its output, and each step's text once,
 * even when the durable stream is held so that the next step's live text comes first.
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

/** A gate the queries of a client wait at while it is closed; open at first. */
function queryGate(): { close: () => void; open: () => void; client: Client } {
  let held: Promise<void> = Promise.resolve();
  let release = () => {};
  const client = new Client({
    connection: turnpike.client.connection,
    namespace: turnpike.client.options.namespace,
    dataConverter: turnpike.client.options.dataConverter,
    interceptors: { workflow: [{ query: async (input, next) => (await held, next(input)) }] },
  });
  return {
    client,
    close: () => (held = new Promise<void>((resolve) => (release = resolve))),
    open: () => release(),
  };
}

interface Read {
  message: UIMessage;
  chunks: UIMessageChunk[];
  errors: string[];
}

/** Sends as useChat does and reads the response as it does, continuing `continuing`; `onChunk` sees each chunk as it arrives. */
async function send(base: string, chatId: string, messages: UIMessage[], options: { continuing?: UIMessage; onChunk?: (chunk: UIMessageChunk) => void } = {}): Promise<Read> {
  const transport = new DefaultChatTransport<UIMessage>({ api: `${base}/api/chat`, headers: { authorization: 'Bearer alice-token' }, body: { model: MODEL } });
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

describe('/api/chat, live, continued after an approval', () => {
  for (const held of [false, true]) {
    it(`shows each call of the parked step once, with its output, and each step's text once${held ? ", with the durable stream held while the next step's text streams" : ''}`, async () => {
      const gate = queryGate();
      const client = new TurnpikeClient({ client: gate.client, taskQueue: turnpike.taskQueue, liveDeltas: channel });
      const served = await serveApi(turnpike, { client });
      apis.push(served.api);
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
      const asked = await send(served.base, chatId, [user]);
      expect(asked.errors).toEqual([]);
      expect(toolParts(asked.message).find((part) => part.type === 'tool-guarded_action')).toMatchObject({ state: 'approval-requested' });

      const responded = approve(asked.message);
      let text = '';
      const answered = await send(served.base, chatId, [user, responded], {
        continuing: responded,
        // Once the response is open, hold every durable read until the next step's text is shown live.
        onChunk: (chunk) => {
          if (held && chunk.type === 'start') gate.close();
          if (chunk.type === 'text-delta') text += chunk.delta;
          if (text === SECOND) gate.open();
        },
      });
      gate.open();
      expect(answered.errors).toEqual([]);
      const result = await client.turnResult(`${chatId}/turn-1`);
      expect(result).toMatchObject({ status: 'completed', text: SECOND });
      expect(result.toolCalls).toHaveLength(2);

      const parts = toolParts(answered.message);
      expect(parts.map((part) => part.toolCallId).sort()).toEqual(result.toolCalls.map((call) => call.toolCallId).sort());
      for (const part of parts) expect(part).toMatchObject({ state: 'output-available', output: expect.anything() });
      expect(texts(answered.message)).toEqual([FIRST, SECOND]);
    });
  }
});
