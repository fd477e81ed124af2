/**
 * What crosses from an `ai-sdk` model and back, through the real `@ai-sdk/google` against the
 * strict Gemini fake on the real dev server (test/support/gemini-suite.ts): a subscriber of a
 * streaming turn seeing its text deltas while the model step still runs, a reply grounded in
 * Google Search with its sources, code the provider ran, and thought signatures sent back
 * unchanged or refused by Gemini when altered (docs/models.md). How such a turn ends is in
 * ai-sdk-parity.test.ts.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { UiMessageChunk } from '../../api/ui-message-chunk.js';
import { UiMessageChunkMapper } from '../../api/ui-message-chunks.js';
import type { Message } from '../../workflows/types/index.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import type { Json } from '../fake-provider/server.js';
import { errorsOf, thinking, useGeminiSuite } from '../support/gemini-suite.js';
import { readSseFrom } from '../support/sse-reader.js';

const suite = useGeminiSuite();

describe('a subscriber of a streaming ai-sdk turn', () => {
  it('receives the text deltas in order (client and SSE), the first while the model step still runs, and the text is their concatenation', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const pieces = ['The ', 'parcel left the depot ', 'at nine and arrives ', 'tomorrow.'];
    suite.gemini.script([{ textPieces: pieces, stream: { pauseAfterChunks: 1, resume: released } }]);

    const handle = await suite.startGeminiTurn('Where is my parcel?', {}, { startedBy: 'alice' });
    // A second subscriber over the HTTP API's SSE, as a browser's EventSource reads it.
    const sse = readSseFrom(`${suite.api.base}/api/turns/${encodeURIComponent(handle.workflowId)}/events`, { authorization: 'Bearer alice-token' }, (message) => message.event === 'end');
    const iterator = suite.client.turnEvents(handle.workflowId)[Symbol.asyncIterator]();
    const first = await iterator.next();

    // The fake still holds the rest of the reply, so the model activity cannot have completed.
    expect(first.done).toBe(false);
    expect(first.value!.event).toEqual({ type: 'text-delta', text: 'The ', step: 1, attempt: 1 });
    const description = await handle.describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.raw.pendingActivities?.map((activity) => activity.activityType?.name)).toEqual(['callModel']);
    expect(suite.gemini.requests.map((request) => request.stream)).toEqual([true]);

    release();
    const seen: TurnEventRecord[] = [first.value!];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value);
    const result = await handle.result();

    const deltas = seen.flatMap(({ event }) => (event.type === 'text-delta' ? [event.text] : []));
    // Deltas that arrive together may reach the stream as one event; in order, they are the text.
    expect(deltas[0]).toBe('The ');
    expect(deltas.join('')).toBe(pieces.join(''));
    expect(result).toMatchObject({ status: 'completed', text: deltas.join('') });
    expect(seen.map(({ offset }) => offset)).toEqual(seen.map((_, index) => index));
    expect(seen.at(-1)!.event).toMatchObject({ type: 'turn-finished', status: 'completed', text: pieces.join('') });
    expect(errorsOf(suite.gemini.requests)).toEqual([]);

    const { status, messages } = await sse;
    expect(status).toBe(200);
    const records = messages.filter((message) => message.event === 'message').map((message) => JSON.parse(message.data) as TurnEventRecord);
    expect(records.map((record) => record.offset)).toEqual(seen.map(({ offset }) => offset));
    expect(records.flatMap(({ event }) => (event.type === 'text-delta' ? [event.text] : [])).join('')).toBe(pieces.join(''));
  });
});

describe('what crosses from an AI SDK model, and what does not (docs/models.md)', () => {
  it.each([true, false])('keeps the text of a reply grounded in Google Search and its sources, on the result, the stream and useChat (stream: %s)', async (stream) => {
    const sources = [{ uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/a1', title: 'weather.com' }, { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/b2', title: 'met.ie' }];
    suite.gemini.script([{ textPieces: ['Dublin: ', 'light rain, 12°C.'], grounding: { queries: ['weather Dublin today'], sources } }, { text: 'Bring an umbrella.' }]);
    const handle = await suite.startGeminiTurn('What is the weather in Dublin?', { model: 'searching', stream }, { tools: [] });
    const events: TurnEventRecord[] = [];
    for await (const record of suite.client.turnEvents(handle.workflowId)) events.push(record);
    const result = await handle.result();

    expect(suite.gemini.requests.map((request) => [request.status, request.errors, request.body.tools])).toEqual([[200, [], [{ googleSearch: {} }]]]);
    expect(suite.gemini.requests[0].reply!.at(-1)!.candidates[0].groundingMetadata.groundingChunks).toHaveLength(2);
    // The text crosses, whole; the grounding sources cross as one provider-run part of their own
    // (the spec ties them to no call), recorded with the turn's calls as run by the provider.
    const urls = sources.map((source) => ({ url: source.uri, title: source.title }));
    expect(result).toMatchObject({ status: 'completed', steps: 1, text: 'Dublin: light rain, 12°C.' });
    const [sourcesPart] = (result.messages[0] as Extract<Message, { role: 'assistant' }>).content.filter((part) => part.type === 'provider-tool');
    expect(result.messages).toEqual([{ role: 'assistant', content: [{ type: 'text', text: 'Dublin: light rain, 12°C.' }, sourcesPart] }]);
    expect(sourcesPart).toMatchObject({ provider: 'ai-sdk', toolName: 'sources', sources: urls, output: urls, raw: urls.map((source) => ({ type: 'source', sourceType: 'url', ...source })) });
    expect(result.toolCalls).toEqual([{ toolCallId: sourcesPart.toolCallId, toolName: 'sources', input: {}, outcome: 'executed', output: urls, isError: false, executedBy: 'provider' }]);
    const shown = events.flatMap(({ event }) => (event.type === 'provider-tool' ? [event] : []));
    expect(shown).toEqual([{ type: 'provider-tool', step: 1, toolCallId: sourcesPart.toolCallId, toolName: 'sources', input: {}, output: urls, isError: false, sources: urls }]);
    const mapper = new UiMessageChunkMapper();
    const chunks: UiMessageChunk[] = [];
    for (const { event } of events) chunks.push(...(await mapper.map(event)));
    // useChat gets the sources as source-url parts only, as the AI SDK's own UI stream sends them: no tool part.
    expect(chunks.filter((chunk) => chunk.type.startsWith('source-') || ('toolCallId' in chunk && chunk.toolCallId === sourcesPart.toolCallId))).toEqual(
      urls.map((source, index) => ({ type: 'source-url', sourceId: `${sourcesPart.toolCallId}-${index}`, ...source })),
    );

    // The next turn on that history: the sources are output only, nothing of them goes back, and
    // the strict fake accepts the request.
    const next = await suite.startGeminiTurn('Should I bring an umbrella?', { stream }, { tools: [], history: [{ role: 'user', content: 'What is the weather in Dublin?' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Bring an umbrella.' });
    expect(suite.gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    expect(JSON.stringify(suite.gemini.requests[1].body)).not.toContain('grounding-api-redirect');
    expect(suite.gemini.requests[1].body.contents.map((content: Json) => content.role)).toEqual(['user', 'model', 'user']);
  });
});

describe('code the provider ran (ai-sdk)', () => {
  it.each([true, false])('records a provider-executed code run as one provider-tool part and sends it back to Gemini on the next turn (stream: %s)', async (stream) => {
    const code = 'print(sum(range(11)))';
    suite.gemini.script([{ codeExecution: { code, output: '55\n' }, text: 'The sum is 55.' }, { text: 'Yes.' }]);
    const handle = await suite.startGeminiTurn('Sum 0..10 with code.', { model: 'coding', stream }, { tools: [] });
    const result = await handle.result();

    const assistant = result.messages[0] as Extract<Message, { role: 'assistant' }>;
    const [run] = assistant.content.filter((part) => part.type === 'provider-tool');
    expect(run).toMatchObject({ provider: 'ai-sdk', toolName: 'code_execution', input: { language: 'PYTHON', code }, output: { outcome: 'OUTCOME_OK', output: '55\n' } });
    expect(run.raw.map((part) => (part as { type: string }).type)).toEqual(['tool-call', 'tool-result']);
    expect(result.toolCalls).toEqual([{ toolCallId: run.toolCallId, toolName: 'code_execution', input: { language: 'PYTHON', code }, outcome: 'executed', output: { outcome: 'OUTCOME_OK', output: '55\n' }, isError: false, executedBy: 'provider' }]);

    const next = await suite.startGeminiTurn('Is that right?', { model: 'coding', stream }, { tools: [], history: [{ role: 'user', content: 'Sum 0..10 with code.' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Yes.' });
    expect(suite.gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    const model = suite.gemini.requests[1].body.contents[1];
    expect(model.role).toBe('model');
    expect(model.parts.slice(0, 2)).toEqual([{ executableCode: { language: 'PYTHON', code } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '55\n' } }]);
  });
});

describe('thought signatures sent back', () => {
  it('fails the next turn at once, with Gemini\'s own error, when a signature in its history was altered', async () => {
    suite.gemini.script([{ thinking: 'One audit record.', toolCalls: [{ name: 'record_action', args: { action: 'audit' } }] }, { thinking: 'Done.', text: 'Audited.' }]);
    const first = await (await suite.startGeminiTurn('Audit.', { providerOptions: thinking })).result();
    expect(first).toMatchObject({ status: 'completed', text: 'Audited.' });
    const call = first.messages.flatMap((message) => (message.role === 'assistant' ? message.content : [])).find((part) => part.type === 'tool-call')!;
    const signature = (call.providerMetadata as { google: { thoughtSignature: string } }).google.thoughtSignature;
    expect(signature).toEqual(suite.gemini.requests[0].reply!.flatMap((chunk) => chunk.candidates[0].content.parts).find((part) => part.functionCall)!.thoughtSignature);

    // One character of the signature changed, as a lossy store or a re-encoding would.
    const altered = structuredClone(first.messages);
    for (const message of altered) {
      if (message.role !== 'assistant') continue;
      for (const part of message.content) {
        if (part.type === 'tool-call') part.providerMetadata = { google: { thoughtSignature: (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1) } };
      }
    }
    suite.gemini.requests.length = 0;
    const handle = await suite.startGeminiTurn('And again.', { providerOptions: thinking }, { history: [{ role: 'user', content: 'Audit.' }, ...altered] });
    const error = await handle.result().then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const chain: string[] = [];
    for (let cause: unknown = error; cause instanceof Error; cause = (cause as Error & { cause?: unknown }).cause) chain.push(`${(cause as { type?: string }).type ?? ''}: ${cause.message}`);
    expect(chain.join(' <- ')).toMatch(/ProviderBadRequestError: ai-sdk gemini \(google.generative-ai\): 400 Bad Request — Corrupted thought signature\./);
    expect(suite.gemini.requests.map((request) => [request.status, request.errors])).toEqual([[400, ['Corrupted thought signature.']]]);
  });
});
