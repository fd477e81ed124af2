/**
 * The `ai-sdk` provider does what the native providers do, through the real `@ai-sdk/google`
 * against the strict Gemini fake (test/fake-provider/gemini.ts), on the real dev server: typed
 * answers asked through the spec's `responseFormat` and checked and corrected by the turn
 * (docs/typed-output.md), replies cut off by `MAX_TOKENS` or stopped for safety ending the turn
 * as `max-tokens` / `refused` (docs/models.md), and a subscriber of a streaming turn seeing its
 * text deltas while the model step still runs.
 */
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UiMessageChunkMapper, type UiMessageChunk } from '../../api/ui-message-chunks.js';
import { toOutputSpec, TurnpikeClient, typedOutput } from '../../client/index.js';
import { agentTurnStatusKey } from '../../workflows/context/search-attributes.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput, Message } from '../../workflows/types/index.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import { startFakeGemini, type FakeGemini, type GeminiRequest } from '../fake-provider/gemini.js';
import type { Json } from '../fake-provider/server.js';
import type { AiSdkLanguageModel } from '../../worker/index.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { serveApi } from '../support/api-server.js';
import { readSseFrom } from '../support/sse-reader.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const GEMINI_KEY = 'gemini-test-parity-7c1f';

let gemini: FakeGemini;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: Awaited<ReturnType<typeof serveApi>>;

beforeAll(async () => {
  gemini = await startFakeGemini(GEMINI_KEY);
  const google = createGoogleGenerativeAI({ baseURL: gemini.baseURL, apiKey: GEMINI_KEY });
  turnpike = await startTurnpike({
    tools: testTools,
    models: { gemini: google('gemini-2.5-flash'), flash3: google('gemini-3-flash-preview'), searching: withGoogleSearch(google('gemini-2.5-flash')), coding: withGoogleSearch(google('gemini-2.5-flash'), 'code_execution') },
  });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await serveApi(turnpike);
});

afterAll(async () => {
  await api?.api.close();
  await turnpike?.stop();
  await gemini?.close();
});

beforeEach(() => {
  gemini.requests.length = 0;
});

/**
 * A registered model that lets Gemini search the web itself: every call also offers the
 * provider's `google_search` (or `code_execution`) tool, as an application's own wrapper (or the AI SDK's
 * `wrapLanguageModel`) would; turnpike sends only function tools.
 */
function withGoogleSearch(model: ReturnType<ReturnType<typeof createGoogleGenerativeAI>>, tool: 'google_search' | 'code_execution' = 'google_search'): AiSdkLanguageModel {
  const search = { type: 'provider' as const, id: `google.${tool}` as const, name: tool, args: {} };
  type Options = Parameters<typeof model.doStream>[0];
  const withSearch = (options: Options): Options => ({ ...options, tools: [...(options.tools ?? []), search] });
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    doGenerate: ((options: Options) => model.doGenerate(withSearch(options))) as AiSdkLanguageModel['doGenerate'],
    doStream: ((options: Options) => model.doStream(withSearch(options))) as AiSdkLanguageModel['doStream'],
  };
}

const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };
const thinking = { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } };

function startGeminiTurn(
  text: string,
  model: Partial<AgentTurnInput['model']> = {},
  extra: Partial<AgentTurnInput> & { history?: Message[]; startedBy?: string } = {},
): Promise<WorkflowHandle<typeof agentTurn>> {
  const { history, ...rest } = extra;
  return turnpike.startTurn({
    model: { provider: 'ai-sdk', model: 'gemini', ...model },
    ...(history ? { messages: [...history, { role: 'user', content: text }] } : { text }),
    modelCallOptions: fastRetries,
    ...rest,
  });
}

const errorsOf = (requests: GeminiRequest[]) => requests.flatMap((request) => request.errors);

/** The user texts of a request, as Gemini received them. */
function userTexts(request: GeminiRequest): string {
  return JSON.stringify(request.body.contents.filter((content: Json) => content.role === 'user'));
}

/** What the turn set `AgentTurnStatus` to, upsert by upsert, from its history. */
async function upsertedStatuses(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return history.events!.flatMap((event) => {
    const field = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentTurnStatus;
    return field?.data ? [JSON.parse(Buffer.from(field.data).toString('utf8')) as string] : [];
  });
}

const Trip = z.object({ city: z.string(), days: z.number() });
const TRIP_SCHEMA = toOutputSpec({ schema: Trip }).schema;

describe('typed output on ai-sdk (responseFormat)', () => {
  // Gemini 3 takes a JSON answer and function tools together: the schema goes as
  // `responseJsonSchema`. Gemini 2.5 refuses them together ("Function calling with a response
  // mime type: 'application/json' is unsupported"), so @ai-sdk/google offers the schema as a
  // function `json` and forces a call (mode ANY); the call's arguments are the answer.
  const answer = (model: 'gemini' | 'flash3', json: unknown) => (model === 'flash3' ? { json } : { toolCalls: [{ name: 'json', args: json as Record<string, unknown> }] });

  it.each(['gemini', 'flash3'] as const)('returns a typed answer after a tool step on %s, every step asking for the schema with the tools offered', async (model) => {
    gemini.script([{ toolCalls: [{ name: 'record_action', args: { action: 'plan' } }] }, answer(model, { city: 'Lisbon', days: 4 })]);
    const handle = await startGeminiTurn('Plan a trip.', { model }, { output: { schema: TRIP_SCHEMA } });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 }, text: JSON.stringify({ city: 'Lisbon', days: 4 }) });
    expect(typedOutput(result, Trip)).toEqual({ city: 'Lisbon', days: 4 });
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['record_action']);
    expect(gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    for (const request of gemini.requests) {
      const names = request.body.tools.flatMap((tool: Json) => tool.functionDeclarations.map((declaration: Json) => declaration.name));
      expect(names).toContain('record_action');
      if (model === 'flash3') {
        expect(request.body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: { type: 'object', required: ['city', 'days'] } });
      } else {
        expect(request.body.generationConfig?.responseMimeType).toBeUndefined();
        expect(names).toContain('json');
        expect(request.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
      }
    }
  });

  it.each(['gemini', 'flash3'] as const)('sends an invalid answer back with its errors on %s, then accepts the corrected one', async (model) => {
    gemini.script([answer(model, { city: 'Lisbon' }), answer(model, { city: 'Lisbon', days: 4 })]);
    const handle = await startGeminiTurn('Plan a trip.', { model }, { output: { schema: TRIP_SCHEMA } });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 } });
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
    const [first, second] = gemini.requests;
    expect(errorsOf(gemini.requests)).toEqual([]);
    expect(gemini.requests).toHaveLength(2);
    // Both steps asked for the schema: natively on Gemini 3, as the forced `json` function before.
    for (const request of gemini.requests) {
      if (model === 'flash3') expect(request.body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: { required: ['city', 'days'] } });
      else expect(request.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    }
    expect(userTexts(first)).not.toContain('final_answer');
    // The model was told exactly what was wrong, after its own answer.
    expect(userTexts(second)).toContain('not valid \\"final_answer\\" output');
    expect(userTexts(second)).toMatch(/days: Invalid input: expected number/);
    expect(JSON.stringify(second.body.contents[1])).toContain(JSON.stringify(JSON.stringify({ city: 'Lisbon' })).slice(1, -1));
  });
});

describe('cut-offs and refusals on ai-sdk', () => {
  it.each([true, false])('ends the turn as max-tokens on MAX_TOKENS after a tool step (stream: %s), with the partial text', async (stream) => {
    gemini.script([
      { toolCalls: [{ name: 'record_action', args: { action: 'first' } }] },
      { text: 'Recorded. The summary of what happened is that the', finishReason: 'MAX_TOKENS' },
    ]);
    const handle = await startGeminiTurn('Record something, then summarise.', { stream });
    const result = await handle.result();

    expect(result).toMatchObject({
      status: 'max-tokens',
      steps: 2,
      text: 'Recorded. The summary of what happened is that the',
      cutOff: { step: 2, finishReason: 'length', providerFinishReason: 'MAX_TOKENS' },
    });
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed']);
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Recorded. The summary of what happened is that the' }] });
    expect(await handle.query(turnStateQuery)).toMatchObject({ status: 'max-tokens', pending: [] });
    expect((await handle.describe()).typedSearchAttributes.get(agentTurnStatusKey)).toBe('max-tokens');
    expect(await upsertedStatuses(handle)).toEqual(['running', 'max-tokens']);
    // Not retried, not continued.
    expect(gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
  });

  it('never runs or parks a tool call of a cut-off reply, answers each, and the signed history is valid input for the next turn', async () => {
    gemini.script([
      {
        thinking: 'Audit first, then the guarded action.',
        text: 'Starting the maintenance.',
        toolCalls: [{ name: 'record_action', args: { action: 'audit' } }, { name: 'guarded_action', args: { target: 'prod-db', count: 1 } }],
        finishReason: 'MAX_TOKENS',
      },
    ]);
    const handle = await startGeminiTurn('Do the maintenance.', { providerOptions: thinking });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'max-tokens', steps: 1, text: 'Starting the maintenance.', cutOff: { step: 1, finishReason: 'length', providerFinishReason: 'MAX_TOKENS' } });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome, call.isError])).toEqual([
      ['record_action', 'cancelled', true],
      ['guarded_action', 'cancelled', true],
    ]);
    for (const call of result.toolCalls) expect(String(call.output)).toMatch(new RegExp(`cut off by the output token limit while it held this call to "${call.toolName}".*it did not run`));
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool']);
    expect(executionsOf(handle.workflowId)).toEqual([]);
    expect(await upsertedStatuses(handle)).toEqual(['running', 'max-tokens']);

    // The next turn sends that history back, the signed call with its signature unchanged, and
    // the strict fake accepts it.
    const signature = gemini.requests[0].reply!.flatMap((chunk) => chunk.candidates[0].content.parts).find((part) => part.functionCall)!.thoughtSignature;
    gemini.script([{ text: 'Done in smaller steps.' }]);
    const next = await startGeminiTurn('Please try again, one step at a time.', { providerOptions: thinking }, { history: [{ role: 'user', content: 'Do the maintenance.' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Done in smaller steps.' });
    expect(gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    const sent = gemini.requests[1].body.contents;
    expect(sent.map((content: Json) => content.role)).toEqual(['user', 'model', 'user', 'user']);
    expect(sent[1].parts).toContainEqual({ functionCall: expect.objectContaining({ name: 'record_action', args: { action: 'audit' } }), thoughtSignature: signature });
    expect(JSON.stringify(sent[2])).toContain('it did not run');
  });

  it.each([
    [true, 'SAFETY', 'with no content', { noContent: true as const }],
    [false, 'SAFETY', 'with no content', { noContent: true as const }],
    [true, 'SAFETY', 'with partial text', { text: 'I can help with part of' }],
    [true, 'PROHIBITED_CONTENT', 'on a blocked prompt', { promptBlocked: 'PROHIBITED_CONTENT' }],
    [false, 'PROHIBITED_CONTENT', 'on a blocked prompt', { promptBlocked: 'PROHIBITED_CONTENT' }],
  ] as const)('ends the turn as refused (stream: %s) on %s %s, without retrying it', async (stream, wire, _how, reply) => {
    gemini.script([{ ...reply, ...('promptBlocked' in reply ? {} : { finishReason: wire }) }]);
    const handle = await startGeminiTurn('Something the model will not do.', { stream });
    const result = await handle.result();

    const text = 'text' in reply ? reply.text : '';
    expect(result).toMatchObject({ status: 'refused', steps: 1, text, toolCalls: [], cutOff: { step: 1, finishReason: 'content-filter', providerFinishReason: wire } });
    // An empty reply adds no empty assistant message to the history.
    expect(result.messages).toEqual(text ? [{ role: 'assistant', content: [{ type: 'text', text }] }] : []);
    expect(await handle.query(turnStateQuery)).toMatchObject({ status: 'refused' });
    expect((await handle.describe()).typedSearchAttributes.get(agentTurnStatusKey)).toBe('refused');
    expect(gemini.requests.map((request) => [request.stream, request.status, request.errors])).toEqual([[stream, 200, []]]);
  });
});

describe('a subscriber of a streaming ai-sdk turn', () => {
  it('receives the text deltas in order (client and SSE), the first while the model step still runs, and the text is their concatenation', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const pieces = ['The ', 'parcel left the depot ', 'at nine and arrives ', 'tomorrow.'];
    gemini.script([{ textPieces: pieces, stream: { pauseAfterChunks: 1, resume: released } }]);

    const handle = await startGeminiTurn('Where is my parcel?', {}, { startedBy: 'alice' });
    // A second subscriber over the HTTP API's SSE, as a browser's EventSource reads it.
    const sse = readSseFrom(`${api.base}/api/turns/${encodeURIComponent(handle.workflowId)}/events`, { authorization: 'Bearer alice-token' }, (message) => message.event === 'end');
    const iterator = client.turnEvents(handle.workflowId)[Symbol.asyncIterator]();
    const first = await iterator.next();

    // The fake still holds the rest of the reply, so the model activity cannot have completed.
    expect(first.done).toBe(false);
    expect(first.value!.event).toEqual({ type: 'text-delta', text: 'The ', step: 1, attempt: 1 });
    const description = await handle.describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.raw.pendingActivities?.map((activity) => activity.activityType?.name)).toEqual(['callModel']);
    expect(gemini.requests.map((request) => request.stream)).toEqual([true]);

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
    expect(errorsOf(gemini.requests)).toEqual([]);

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
    gemini.script([{ textPieces: ['Dublin: ', 'light rain, 12°C.'], grounding: { queries: ['weather Dublin today'], sources } }, { text: 'Bring an umbrella.' }]);
    const handle = await startGeminiTurn('What is the weather in Dublin?', { model: 'searching', stream }, { tools: [] });
    const events: TurnEventRecord[] = [];
    for await (const record of client.turnEvents(handle.workflowId)) events.push(record);
    const result = await handle.result();

    expect(gemini.requests.map((request) => [request.status, request.errors, request.body.tools])).toEqual([[200, [], [{ googleSearch: {} }]]]);
    expect(gemini.requests[0].reply!.at(-1)!.candidates[0].groundingMetadata.groundingChunks).toHaveLength(2);
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
    expect(chunks.filter((chunk) => chunk.type === 'source-url')).toEqual(urls.map((source, index) => ({ type: 'source-url', sourceId: `${sourcesPart.toolCallId}-${index}`, ...source })));

    // The next turn on that history: the sources are output only, nothing of them goes back, and
    // the strict fake accepts the request.
    const next = await startGeminiTurn('Should I bring an umbrella?', { stream }, { tools: [], history: [{ role: 'user', content: 'What is the weather in Dublin?' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Bring an umbrella.' });
    expect(gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    expect(JSON.stringify(gemini.requests[1].body)).not.toContain('grounding-api-redirect');
    expect(gemini.requests[1].body.contents.map((content: Json) => content.role)).toEqual(['user', 'model', 'user']);
  });
});

describe('code the provider ran (ai-sdk)', () => {
  it.each([true, false])('records a provider-executed code run as one provider-tool part and sends it back to Gemini on the next turn (stream: %s)', async (stream) => {
    const code = 'print(sum(range(11)))';
    gemini.script([{ codeExecution: { code, output: '55\n' }, text: 'The sum is 55.' }, { text: 'Yes.' }]);
    const handle = await startGeminiTurn('Sum 0..10 with code.', { model: 'coding', stream }, { tools: [] });
    const result = await handle.result();

    const assistant = result.messages[0] as Extract<Message, { role: 'assistant' }>;
    const [run] = assistant.content.filter((part) => part.type === 'provider-tool');
    expect(run).toMatchObject({ provider: 'ai-sdk', toolName: 'code_execution', input: { language: 'PYTHON', code }, output: { outcome: 'OUTCOME_OK', output: '55\n' } });
    expect(run.raw.map((part) => (part as { type: string }).type)).toEqual(['tool-call', 'tool-result']);
    expect(result.toolCalls).toEqual([{ toolCallId: run.toolCallId, toolName: 'code_execution', input: { language: 'PYTHON', code }, outcome: 'executed', output: { outcome: 'OUTCOME_OK', output: '55\n' }, isError: false, executedBy: 'provider' }]);

    const next = await startGeminiTurn('Is that right?', { model: 'coding', stream }, { tools: [], history: [{ role: 'user', content: 'Sum 0..10 with code.' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Yes.' });
    expect(gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    const model = gemini.requests[1].body.contents[1];
    expect(model.role).toBe('model');
    expect(model.parts.slice(0, 2)).toEqual([{ executableCode: { language: 'PYTHON', code } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '55\n' } }]);
  });
});

describe('thought signatures sent back', () => {
  it('fails the next turn at once, with Gemini\'s own error, when a signature in its history was altered', async () => {
    gemini.script([{ thinking: 'One audit record.', toolCalls: [{ name: 'record_action', args: { action: 'audit' } }] }, { thinking: 'Done.', text: 'Audited.' }]);
    const first = await (await startGeminiTurn('Audit.', { providerOptions: thinking })).result();
    expect(first).toMatchObject({ status: 'completed', text: 'Audited.' });
    const call = first.messages.flatMap((message) => (message.role === 'assistant' ? message.content : [])).find((part) => part.type === 'tool-call')!;
    const signature = (call.providerMetadata as { google: { thoughtSignature: string } }).google.thoughtSignature;
    expect(signature).toEqual(gemini.requests[0].reply!.flatMap((chunk) => chunk.candidates[0].content.parts).find((part) => part.functionCall)!.thoughtSignature);

    // One character of the signature changed, as a lossy store or a re-encoding would.
    const altered = structuredClone(first.messages);
    for (const message of altered) {
      if (message.role !== 'assistant') continue;
      for (const part of message.content) {
        if (part.type === 'tool-call') part.providerMetadata = { google: { thoughtSignature: (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1) } };
      }
    }
    gemini.requests.length = 0;
    const handle = await startGeminiTurn('And again.', { providerOptions: thinking }, { history: [{ role: 'user', content: 'Audit.' }, ...altered] });
    const error = await handle.result().then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const chain: string[] = [];
    for (let cause: unknown = error; cause instanceof Error; cause = (cause as Error & { cause?: unknown }).cause) chain.push(`${(cause as { type?: string }).type ?? ''}: ${cause.message}`);
    expect(chain.join(' <- ')).toMatch(/ProviderBadRequestError: ai-sdk gemini \(google.generative-ai\): 400 Bad Request — Corrupted thought signature\./);
    expect(gemini.requests.map((request) => [request.status, request.errors])).toEqual([[400, ['Corrupted thought signature.']]]);
  });
});
