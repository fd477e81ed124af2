/**
 * How a turn on the `ai-sdk` provider ends, as on the native providers, through the real
 * `@ai-sdk/google` against the strict Gemini fake on the real dev server (test/support/gemini-suite.ts):
 * typed answers asked through the spec's `responseFormat` and checked and corrected by the turn
 * (docs/typed-output.md), and replies cut off by `MAX_TOKENS` or stopped for safety ending the
 * turn as `max-tokens` / `refused` (docs/models.md). What crosses from the model and back is in
 * ai-sdk-crossing.test.ts.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toOutputSpec, typedOutput } from '../../client/index.js';
import { agentTurnStatusKey } from '../../workflows/context/search-attributes.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { GeminiRequest } from '../fake-provider/gemini.js';
import type { Json } from '../fake-provider/server.js';
import { errorsOf, thinking, useGeminiSuite } from '../support/gemini-suite.js';
import { executionsOf } from '../support/test-tools.js';

const suite = useGeminiSuite();

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
    suite.gemini.script([{ toolCalls: [{ name: 'record_action', args: { action: 'plan' } }] }, answer(model, { city: 'Lisbon', days: 4 })]);
    const handle = await suite.startGeminiTurn('Plan a trip.', { model }, { output: { schema: TRIP_SCHEMA } });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 }, text: JSON.stringify({ city: 'Lisbon', days: 4 }) });
    expect(typedOutput(result, Trip)).toEqual({ city: 'Lisbon', days: 4 });
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['record_action']);
    expect(suite.gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    for (const request of suite.gemini.requests) {
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
    suite.gemini.script([answer(model, { city: 'Lisbon' }), answer(model, { city: 'Lisbon', days: 4 })]);
    const handle = await suite.startGeminiTurn('Plan a trip.', { model }, { output: { schema: TRIP_SCHEMA } });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 } });
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
    const [first, second] = suite.gemini.requests;
    expect(errorsOf(suite.gemini.requests)).toEqual([]);
    expect(suite.gemini.requests).toHaveLength(2);
    // Both steps asked for the schema: natively on Gemini 3, as the forced `json` function before.
    for (const request of suite.gemini.requests) {
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
    suite.gemini.script([
      { toolCalls: [{ name: 'record_action', args: { action: 'first' } }] },
      { text: 'Recorded. The summary of what happened is that the', finishReason: 'MAX_TOKENS' },
    ]);
    const handle = await suite.startGeminiTurn('Record something, then summarise.', { stream });
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
    expect(suite.gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
  });

  it('never runs or parks a tool call of a cut-off reply, answers each, and the signed history is valid input for the next turn', async () => {
    suite.gemini.script([
      {
        thinking: 'Audit first, then the guarded action.',
        text: 'Starting the maintenance.',
        toolCalls: [{ name: 'record_action', args: { action: 'audit' } }, { name: 'guarded_action', args: { target: 'prod-db', count: 1 } }],
        finishReason: 'MAX_TOKENS',
      },
    ]);
    const handle = await suite.startGeminiTurn('Do the maintenance.', { providerOptions: thinking });
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
    const signature = suite.gemini.requests[0].reply!.flatMap((chunk) => chunk.candidates[0].content.parts).find((part) => part.functionCall)!.thoughtSignature;
    suite.gemini.script([{ text: 'Done in smaller steps.' }]);
    const next = await suite.startGeminiTurn('Please try again, one step at a time.', { providerOptions: thinking }, { history: [{ role: 'user', content: 'Do the maintenance.' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Done in smaller steps.' });
    expect(suite.gemini.requests.map((request) => [request.status, request.errors])).toEqual([[200, []], [200, []]]);
    const sent = suite.gemini.requests[1].body.contents;
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
    suite.gemini.script([{ ...reply, ...('promptBlocked' in reply ? {} : { finishReason: wire }) }]);
    const handle = await suite.startGeminiTurn('Something the model will not do.', { stream });
    const result = await handle.result();

    const text = 'text' in reply ? reply.text : '';
    expect(result).toMatchObject({ status: 'refused', steps: 1, text, toolCalls: [], cutOff: { step: 1, finishReason: 'content-filter', providerFinishReason: wire } });
    // An empty reply adds no empty assistant message to the history.
    expect(result.messages).toEqual(text ? [{ role: 'assistant', content: [{ type: 'text', text }] }] : []);
    expect(await handle.query(turnStateQuery)).toMatchObject({ status: 'refused' });
    expect((await handle.describe()).typedSearchAttributes.get(agentTurnStatusKey)).toBe('refused');
    expect(suite.gemini.requests.map((request) => [request.stream, request.status, request.errors])).toEqual([[stream, 200, []]]);
  });
});
