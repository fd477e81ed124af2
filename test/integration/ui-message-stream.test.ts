/**
 * `POST /api/chat` read by the `ai` package's own client side (`DefaultChatTransport`, which
 * checks every chunk against the AI SDK's schema, and `readUIMessageStream`, which builds the
 * UIMessage as `useChat` does), over a real socket, against a real dev server.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { serveApi } from '../support/api-server.js';
import { freePort } from '../support/sign-in-browser.js';
import { registerScript } from '../../activities/providers/script.js';

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;
let base: string;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  ({ client, api, base } = await serveApi(turnpike));
});
afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
});

function transport(token = 'alice-token') {
  return new DefaultChatTransport<UIMessage>({ api: `${base}/api/chat`, headers: { authorization: `Bearer ${token}` } });
}

/** Sends as useChat does and returns the assistant message the ai package builds from the stream. */
async function send(chatId: string, messages: UIMessage[], continuing?: UIMessage): Promise<UIMessage> {
  const stream = await transport().sendMessages({ trigger: 'submit-message', chatId, messageId: undefined, messages, abortSignal: undefined });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, ...(continuing ? { message: continuing } : {}), terminateOnError: true })) last = message;
  return last!;
}

type ToolPart = Extract<UIMessage['parts'][number], { toolCallId: string }> & { approval?: { id: string; approved?: boolean; reason?: string } };

describe('AI SDK UI message stream', () => {
  it('streams text, asks for approval, takes the approval from the client as a checked decision, and streams the output and answer', async () => {
    const chatId = `chat-${randomUUID()}`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: use('guarded_action', { target: 'ui-1', count: 4 }) }] };
    const asked = await send(chatId, [user]);
    expect(asked.role).toBe('assistant');
    const toolPart = asked.parts.find((part) => part.type === 'tool-guarded_action') as ToolPart;
    expect(toolPart).toMatchObject({ state: 'approval-requested', input: { target: 'ui-1', count: 4 } });
    const { pending, conversationId } = await client.turnState(`${chatId}/turn-1`);
    expect(conversationId).toBe(chatId);
    expect(toolPart.approval?.id).toBe(pending[0].approvalId);
    expect(executionsOf(`${chatId}/turn-1`)).toHaveLength(0);

    // What useChat's addToolApprovalResponse does to the part before it sends the messages again.
    const responded: UIMessage = {
      ...asked,
      parts: asked.parts.map((part) => (part === toolPart ? ({ ...toolPart, state: 'approval-responded', approval: { id: toolPart.approval!.id, approved: true } } as UIMessage['parts'][number]) : part)),
    };
    const answered = await send(chatId, [user, responded], responded);
    const answeredTool = answered.parts.find((part) => part.type === 'tool-guarded_action') as ToolPart;
    expect(answeredTool).toMatchObject({ state: 'output-available', output: { guarded: 'ui-1', count: 4 } });
    const result = await client.turnResult(`${chatId}/turn-1`);
    const text = answered.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    expect(text).toBe(result.text);
    // The approver is the caller the bearer token names, whatever the browser says.
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approved: true, approver: 'alice', automatic: false } });
    expect(executionsOf(`${chatId}/turn-1`)).toMatchObject([{ toolName: 'guarded_action', input: { target: 'ui-1', count: 4 } }]);
  });

  it('refuses an approval for an input other than the one shown, and a denial reaches the client as denied', async () => {
    const chatId = `chat-${randomUUID()}`;
    const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: use('guarded_action', { target: 'edit', count: 1 }) }] };
    const asked = await send(chatId, [user]);
    const toolPart = asked.parts.find((part) => part.type === 'tool-guarded_action') as ToolPart;
    const respond = (approved: boolean, input: unknown): UIMessage => ({
      ...asked,
      parts: asked.parts.map((part) => (part === toolPart ? ({ ...toolPart, input, state: 'approval-responded', approval: { id: toolPart.approval!.id, approved, reason: 'no' } } as UIMessage['parts'][number]) : part)),
    });
    const forged = await fetch(`${base}/api/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ id: chatId, messages: [user, respond(true, { target: 'edit', count: 999 })] }),
    });
    expect(forged.status).toBe(409);
    expect(((await forged.json()) as { error: { type: string } }).error.type).toBe('InputHashMismatch');
    expect((await client.turnState(`${chatId}/turn-1`)).pending).toHaveLength(1);
    expect((await fetch(`${base}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: chatId, messages: [user] }) })).status).toBe(401);

    const denied = await send(chatId, [user, respond(false, toolPart.input)], respond(false, toolPart.input));
    expect(denied.parts.find((part) => part.type === 'tool-guarded_action')).toMatchObject({ state: 'output-denied' });
    expect((await client.turnResult(`${chatId}/turn-1`)).toolCalls[0]).toMatchObject({ outcome: 'denied', approval: { approver: 'alice' } });
  });

  it("starts a chat on buildApi's chatModel when the request names no model", async () => {
    const model = registerScript([{ type: 'text', text: 'Answered by the chat model.' }]);
    const served = await serveApi(turnpike, { chatModel: { provider: 'scripted', model } });
    try {
      const { chatId, text } = await chatHello(served.base, 'alice-token');
      expect(text).toBe('Answered by the chat model.');
      expect((await client.turnResult(`${chatId}/turn-1`)).text).toBe('Answered by the chat model.');
    } finally {
      await served.api.close();
    }
  });

  it('`npm run api` (api/main.ts) starts chats on TURNPIKE_PROVIDER / TURNPIKE_MODEL when the request names no model', async () => {
    const model = registerScript([{ type: 'text', text: 'Answered by the environment model.' }]);
    const port = await freePort();
    const env = { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), TURNPIKE_TASK_QUEUE: turnpike.taskQueue, TURNPIKE_API_TOKENS: 'main-token:alice', TURNPIKE_API_PORT: String(port), TURNPIKE_PROVIDER: 'scripted', TURNPIKE_MODEL: model };
    const api = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        api.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('Server listening')) resolve();
        });
        api.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        api.once('exit', (code) => reject(new Error(`api/main.ts exited (${code}): ${output}`)));
      });
      const { chatId, text } = await chatHello(`http://127.0.0.1:${port}`, 'main-token');
      expect(text).toBe('Answered by the environment model.');
      expect((await client.turnResult(`${chatId}/turn-1`)).text).toBe('Answered by the environment model.');
    } finally {
      // Its graceful shutdown is not what this test is about.
      if (api.exitCode === null && api.signalCode === null) {
        const exited = new Promise((resolve) => api.once('exit', resolve));
        api.kill('SIGKILL');
        await exited;
      }
    }
  });
});

/** A new chat's first message, "Hello", through useChat's transport: the chat's id and the answer's text. */
async function chatHello(base: string, token: string): Promise<{ chatId: string; text: string }> {
  const chatId = `chat-${randomUUID()}`;
  const user: UIMessage = { id: `u-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Hello' }] };
  const stream = await new DefaultChatTransport<UIMessage>({ api: `${base}/api/chat`, headers: { authorization: `Bearer ${token}` } }).sendMessages({
    trigger: 'submit-message',
    chatId,
    messageId: undefined,
    messages: [user],
    abortSignal: undefined,
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, terminateOnError: true })) last = message;
  return { chatId, text: last!.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('') };
}
