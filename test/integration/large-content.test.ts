/**
 * Content of any size on the real dev server: a 20 MB PDF in the user message and a 50 MB tool
 * result travel by reference through the content store, the strict fakes of both providers get
 * the PDF's exact bytes and the model's view of the result (its first MiB, byte for byte, and a
 * note naming its reference), the caller reads the whole result back, and the turn's history
 * stays under 1 MB. Then a conversation carries ten files across ten turns and a continue-as-new.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { contentKey } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { DEFAULT_MODEL_OUTPUT_BYTES, isStoredOutput } from '../../content/stored-content.js';
import type { ModelSettings, StoredOutput } from '../../workflows/types.js';
import type { Json, RecordedRequest } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const { temporal } = proto;
const MB = 1024 * 1024;

/** A PDF-shaped file of `bytes` bytes whose content no two calls share. */
function pdfOf(bytes: number): Buffer {
  const head = Buffer.from('%PDF-1.7\n');
  const tail = Buffer.from('\n%%EOF\n');
  return Buffer.concat([head, randomBytes(bytes - head.length - tail.length), tail]);
}

/** 50 MB of rows as JSON: what a database tool returns for a large query. */
const ROWS = randomBytes(Math.ceil((50 * MB * 3) / 4)).toString('base64').slice(0, 50 * MB);
const rowsOutput = { rows: ROWS };
const rowsJson = JSON.stringify(rowsOutput);

const exportRows = defineTool({
  name: 'export_rows',
  description: 'Exports every row of a table',
  inputSchema: z.object({ table: z.string() }),
  execute: async () => rowsOutput,
});

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let folder: string;
let store: FileContentStore;

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'turnpike-content-'));
  store = new FileContentStore(folder);
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: [exportRows], contentStore: store });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, contentStore: store });
});
afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
  if (folder) rmSync(folder, { recursive: true, force: true });
});
beforeEach(() => fake.reset());

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** The size of a workflow's whole history as Temporal stores it (protobuf). */
async function historyBytes(workflowId: string): Promise<number> {
  const history = await client.client.workflow.getHandle(workflowId).fetchHistory();
  return temporal.api.history.v1.History.encode(history).finish().length;
}

async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list()) keys.push(object.key);
  return keys;
}

/** Every inline PDF in a recorded request, base64, in order: Chat Completions `file` parts or Anthropic `document` blocks. */
function pdfsSent(request: RecordedRequest): string[] {
  const found: string[] = [];
  const visit = (value: Json): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    const record = value as Record<string, Json>;
    const file = record.file as Record<string, Json> | undefined;
    if (record.type === 'file' && typeof file?.file_data === 'string') found.push(file.file_data.replace(/^data:application\/pdf;base64,/, ''));
    const source = record.source as Record<string, Json> | undefined;
    if (record.type === 'document' && source?.type === 'base64') found.push(String(source.data));
    Object.values(record).forEach(visit);
  };
  visit(request.body);
  return found;
}

/** The content of the request's tool result, as text: a Chat Completions `tool` message or an Anthropic `tool_result` block. */
function toolResultSent(request: RecordedRequest): string | undefined {
  const messages = (request.body as { messages: Array<{ role: string; content: Json }> }).messages;
  const tool = messages.find((message) => message.role === 'tool');
  if (tool) return String(tool.content);
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    const block = (message.content as Array<Record<string, Json>>).find((part) => part.type === 'tool_result');
    if (!block) continue;
    return typeof block.content === 'string' ? block.content : (block.content as Array<{ text: string }>).map((part) => part.text).join('');
  }
  return undefined;
}

describe('content of any size', () => {
  const providers: Array<[string, ModelSettings]> = [
    ['openai', { provider: 'openai', model: 'gpt-4.1-mini' }],
    ['anthropic', { provider: 'anthropic', model: 'claude-sonnet-4-6' }],
  ];

  it.each(providers)('a 20 MB PDF and a 50 MB tool result through %s: exact bytes to the model, the whole result to the caller, a history under 1 MB', async (provider, model) => {
    const pdf = pdfOf(20 * MB);
    fake.script(provider as 'openai' | 'anthropic', [{ toolCalls: [{ name: 'export_rows', input: { table: 'orders' } }] }, { text: 'The export has many rows.' }]);
    const turnId = `turn-${randomUUID()}`;
    await client.startTurn(
      {
        model,
        tools: ['export_rows'],
        modelCallOptions: { retry: { initialInterval: '50ms', maximumAttempts: 2 } },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise this report, then export the orders.' }, { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: pdf.toString('base64') }, filename: 'report.pdf' }] }],
      },
      { turnId },
    );
    noteStarted(client.turn(turnId));
    const result = await client.turnResult(turnId, { waitForStart: true, pollIntervalMs: 100 });
    expect(result.status).toBe('completed');
    expect(result.text).toBe('The export has many rows.');

    const requests = fake.requests.filter((request) => request.provider === provider);
    expect(requests.map((request) => request.errors)).toEqual([[], []]);
    // Both steps send the PDF, byte for byte.
    for (const request of requests) expect(pdfsSent(request).map((data) => sha(Buffer.from(data, 'base64')))).toEqual([sha(pdf)]);
    // The model sees the result's first MiB, exactly, and where the rest is kept.
    const view = toolResultSent(requests[1]!)!;
    const ref = `sha256:${contentKey(Buffer.from(rowsJson))}`;
    expect(view.slice(0, DEFAULT_MODEL_OUTPUT_BYTES)).toBe(rowsJson.slice(0, DEFAULT_MODEL_OUTPUT_BYTES));
    expect(view.slice(DEFAULT_MODEL_OUTPUT_BYTES)).toBe(`\n\n[turnpike: this tool output is ${rowsJson.length} bytes of JSON; the first ${DEFAULT_MODEL_OUTPUT_BYTES} are shown. The whole output is kept as ${ref}.]`);

    // The caller gets a reference in the result, and reads the whole output through it.
    const output = result.toolCalls[0]!.output;
    expect(isStoredOutput(output)).toBe(true);
    expect(output).toEqual({ turnpikeStored: ref, mediaType: 'application/json', bytes: rowsJson.length } satisfies StoredOutput);
    const whole = (await client.readToolOutput(output)) as { rows: string };
    expect(sha(whole.rows)).toBe(sha(ROWS));

    // History holds references only; the store holds each object once.
    expect(await historyBytes(turnId)).toBeLessThan(1 * MB);
    const keys = await storedKeys();
    expect(keys.filter((key) => key === contentKey(pdf))).toHaveLength(1);
    expect(keys.filter((key) => key === contentKey(Buffer.from(rowsJson)))).toHaveLength(1);
  });

  it('a conversation carries ten files across ten turns and a continue-as-new, and each turn sends every one of them', async () => {
    const conversationId = `conv-${randomUUID()}`;
    // Ten 2 MB PDFs: together 27 MB of base64 in the last request, inside Chat Completions' limits.
    const files = Array.from({ length: 10 }, () => pdfOf(2 * MB));
    const model: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini' };
    fake.script(
      'openai',
      files.map((_, index) => ({ text: `Read file ${index + 1}.` })),
    );
    for (const [index, file] of files.entries()) {
      const reply = await client.sendMessage({
        conversationId,
        conversation: { model },
        text: `Here is file ${index + 1}.`,
        content: [{ type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: file.toString('base64') }, filename: `file-${index + 1}.pdf` }],
      });
      if (reply.turnNumber === 1) noteStarted(client.conversation(conversationId));
      noteStarted(client.turn(reply.turnWorkflowId));
      expect((await client.turnResult(reply.turnWorkflowId, { waitForStart: true, pollIntervalMs: 100 })).text).toBe(`Read file ${index + 1}.`);
    }
    const state = await client.conversationState(conversationId);
    expect(state.runs).toBeGreaterThanOrEqual(1);

    const requests = fake.requests.filter((request) => request.provider === 'openai');
    expect(requests.map((request) => request.errors)).toEqual(files.map(() => []));
    // Turn n sends files 1..n, each byte for byte.
    for (const [index, request] of requests.entries()) {
      expect(pdfsSent(request).map((data) => sha(Buffer.from(data, 'base64')))).toEqual(files.slice(0, index + 1).map((file) => sha(file)));
    }
    // The conversation's history holds references: its current run is far smaller than one file.
    expect(await historyBytes(conversationId)).toBeLessThan(1 * MB);
    const keys = new Set(await storedKeys());
    for (const file of files) expect(keys.has(contentKey(file))).toBe(true);
  });
});
