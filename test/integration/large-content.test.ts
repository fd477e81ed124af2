/**
 * Content of any size on the real dev server: a 20 MB PDF in the user message and a 50 MB tool
 * result travel by reference through the content store, the strict fakes of both providers get
 * the PDF's exact bytes and the model's view of the result (its first MiB, byte for byte, and a
 * note naming its reference), the caller reads the whole result back, and the turn's history
 * stays under 1 MB. Then a conversation carries ten files across ten turns and a continue-as-new.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';
import { contentKey } from '../../content/content-store.js';
import { DEFAULT_MODEL_OUTPUT_BYTES, isStoredOutput } from '../../content/stored-content.js';
import type { ModelSettings, StoredOutput } from '../../workflows/types/index.js';
import { historyBytes, MB, pdfOf, pdfsSent, sha, startContentTurnpike, storedKeys, toolResultSent, type ContentTurnpike } from '../support/content-fixtures.js';
import { noteStarted } from '../support/history-recorder.js';

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

let context: ContentTurnpike;
let fake: ContentTurnpike['fake'];
let client: ContentTurnpike['client'];
let store: ContentTurnpike['store'];

beforeAll(async () => {
  context = await startContentTurnpike([exportRows]);
  ({ fake, client, store } = context);
});
afterAll(() => context?.stop());
beforeEach(() => fake.reset());

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
    for (const request of requests) expect(pdfsSent(request)).toEqual([sha(pdf)]);
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
    const bytes = await historyBytes(client.client, turnId);
    console.log(`large-content: ${provider} turn with a 20 MB PDF and a 50 MB tool result: history ${bytes} bytes`);
    expect(bytes).toBeLessThan(1 * MB);
    const keys = await storedKeys(store);
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
      expect(pdfsSent(request)).toEqual(files.slice(0, index + 1).map((file) => sha(file)));
    }
    // The conversation's history holds references: its current run is far smaller than one file.
    const bytes = await historyBytes(client.client, conversationId);
    console.log(`large-content: conversation of ten 2 MB files after ${state.runs} continue-as-new: current run's history ${bytes} bytes`);
    expect(bytes).toBeLessThan(1 * MB);
    const keys = new Set(await storedKeys(store));
    for (const file of files) expect(keys.has(contentKey(file))).toBe(true);
  });
});
