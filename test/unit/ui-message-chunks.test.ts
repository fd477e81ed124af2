/**
 * Turn events as AI SDK UI message stream chunks (api/ui-message-chunks.ts), read back with the
 * `ai` package's own `readUIMessageStream`, as `useChat` builds the message.
 */
import { parsePartialJson, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import type { UiMessageChunk } from '../../api/ui-message-chunk.js';
import { UiMessageChunkMapper } from '../../api/ui-message-chunks.js';
import { LiveStepOrder } from '../../api/ui-live-order.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import type { BudgetApprovalInput, DecisionRecord } from '../../workflows/types/index.js';

async function mapAll(mapper: UiMessageChunkMapper, events: TurnEvent[]): Promise<UiMessageChunk[]> {
  const chunks: UiMessageChunk[] = [];
  for (const event of events) chunks.push(...(await mapper.map(event)));
  return chunks;
}

/** The message `readUIMessageStream` builds from these chunks (throwing on any it cannot apply), and the errors it reported. */
async function messageOf(chunks: UiMessageChunk[], message?: UIMessage): Promise<{ message: UIMessage; errors: string[] }> {
  const errors: string[] = [];
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk as UIMessageChunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const built of readUIMessageStream<UIMessage>({ stream, ...(message ? { message } : {}), onError: (error) => errors.push(String(error)) })) last = built;
  return { message: structuredClone(last!), errors };
}

const parse = async (text: string) => (await parsePartialJson(text)).value;
const usage = { inputTokens: 1, outputTokens: 1 };
const budgetInput: BudgetApprovalInput = { exceeded: ['totalTokens'], spent: { inputTokens: 30, outputTokens: 10, wallTimeMs: 5, toolCalls: 1 }, budget: { totalTokens: 30 }, extendBy: { totalTokens: 30 } };
const budgetRequested: Extract<TurnEvent, { type: 'budget-requested' }> = {
  type: 'budget-requested',
  step: 1,
  approvalId: 'apr_b',
  toolCallId: 'budget-1',
  toolName: 'turnpike_budget',
  input: budgetInput,
  inputHash: 'h',
  requestedAt: 'x',
  expiresAt: 'y',
  reason: 'reached',
};

describe('UiMessageChunkMapper', () => {
  it('maps a step with a retried attempt, a tool call, an approval and its result to AI SDK chunks', async () => {
    const mapper = new UiMessageChunkMapper();
    const events: TurnEvent[] = [
      { type: 'text-delta', text: 'Chec', step: 1, attempt: 1 },
      { type: 'step-retry', step: 1, attempt: 2 },
      { type: 'text-delta', text: 'Checking', step: 1, attempt: 2 },
      { type: 'step-finished', step: 1, finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: 1 },
      { type: 'tool-call', step: 1, toolCallId: 'c1', toolName: 't', input: { a: 1 } },
      { type: 'approval-requested', step: 1, approvalId: 'apr_1', toolCallId: 'c1', toolName: 't', input: { a: 1 }, inputHash: 'h', requestedAt: 'x', expiresAt: 'y', reason: 'big' },
      { type: 'tool-result', step: 1, toolCallId: 'c1', toolName: 't', outcome: 'denied', output: 'no', isError: true },
      { type: 'text-delta', text: 'Done', step: 2, attempt: 1 },
      { type: 'turn-finished', status: 'completed', text: 'Done', steps: 2, usage: { inputTokens: 2, outputTokens: 2 } },
    ];
    expect(await mapAll(mapper, events)).toEqual([
      { type: 'start-step' },
      { type: 'text-start', id: 'text-1-1' },
      { type: 'text-delta', id: 'text-1-1', delta: 'Chec' },
      { type: 'reset-step' },
      { type: 'text-start', id: 'text-1-2' },
      { type: 'text-delta', id: 'text-1-2', delta: 'Checking' },
      { type: 'text-end', id: 'text-1-2' },
      { type: 'tool-input-available', toolCallId: 'c1', toolName: 't', input: { a: 1 } },
      { type: 'tool-approval-request', approvalId: 'apr_1', toolCallId: 'c1', reason: 'big' },
      { type: 'tool-output-denied', toolCallId: 'c1' },
      { type: 'finish-step' },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-2-1' },
      { type: 'text-delta', id: 'text-2-1', delta: 'Done' },
      { type: 'text-end', id: 'text-2-1' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it("places a live read's steps as the durable order does: one tool part, each step's text in one part (with LiveStepOrder)", async () => {
    // Read live (client/live-reader.ts), step 2's deltas may come before step 1's last durable
    // events; a live record repeats the offset of the last durable one.
    const records: Array<{ offset: number; event: TurnEvent }> = [
      { offset: -1, event: { type: 'text-delta', text: 'Checking', step: 1, attempt: 1 } },
      { offset: -1, event: { type: 'tool-input-start', step: 1, attempt: 1, toolCallId: 'c1', toolName: 't' } },
      { offset: -1, event: { type: 'tool-input-delta', step: 1, attempt: 1, toolCallId: 'c1', inputTextDelta: '{"a":1}' } },
      { offset: -1, event: { type: 'text-delta', text: 'It is ', step: 2, attempt: 1 } },
      { offset: 3, event: { type: 'step-finished', step: 1, finishReason: 'tool-calls', usage, toolCalls: 1 } },
      { offset: 4, event: { type: 'tool-call', step: 1, toolCallId: 'c1', toolName: 't', input: { a: 1 } } },
      { offset: 4, event: { type: 'text-delta', text: 'sun', step: 2, attempt: 1 } },
      { offset: 5, event: { type: 'tool-result', step: 1, toolCallId: 'c1', toolName: 't', outcome: 'executed', output: 'sunny', isError: false } },
      { offset: 5, event: { type: 'text-delta', text: 'ny.', step: 2, attempt: 1 } },
      { offset: 7, event: { type: 'step-finished', step: 2, finishReason: 'stop', usage, toolCalls: 0 } },
      { offset: 8, event: { type: 'turn-finished', status: 'completed', text: 'It is sunny.', steps: 2, usage } },
    ];
    const order = new LiveStepOrder();
    const events = records.flatMap((record) => order.push(record));
    // Step 2's first delta waited for step 1's end and call; nothing was dropped or repeated.
    expect(events.map((event) => event.type)).toEqual(['text-delta', 'tool-input-start', 'tool-input-delta', 'step-finished', 'tool-call', 'text-delta', 'text-delta', 'tool-result', 'text-delta', 'step-finished', 'turn-finished']);
    const { message, errors } = await messageOf([{ type: 'start', messageId: 'm' }, ...(await mapAll(new UiMessageChunkMapper(), events))]);
    expect(errors).toEqual([]);
    expect(message.parts.map((part) => part.type)).toEqual(['step-start', 'text', 'tool-t', 'step-start', 'text']);
    expect(message.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['Checking', 'It is sunny.']);
    expect(message.parts[2]).toMatchObject({ toolCallId: 'c1', state: 'output-available', input: { a: 1 }, output: 'sunny' });
  });

  it("continues a message after an approval in the UI step it left open: a parallel call whose input streamed there gets no second part", async () => {
    const call = (id: string): TurnEvent => ({ type: 'tool-call', step: 1, toolCallId: id, toolName: 't', input: { id } });
    const result = (id: string): TurnEvent => ({ type: 'tool-result', step: 1, toolCallId: id, toolName: 't', outcome: 'executed', output: `ran ${id}`, isError: false });
    // The first response: both calls' inputs stream, then the first call parks and the response ends.
    const shown: TurnEvent[] = [
      { type: 'text-delta', text: 'Both.', step: 1, attempt: 1 },
      { type: 'tool-input-start', step: 1, attempt: 1, toolCallId: 'c1', toolName: 't' },
      { type: 'tool-input-start', step: 1, attempt: 1, toolCallId: 'c2', toolName: 't' },
      { type: 'step-finished', step: 1, finishReason: 'tool-calls', usage, toolCalls: 2 },
      call('c1'),
      { type: 'approval-requested', step: 1, approvalId: 'apr_1', toolCallId: 'c1', toolName: 't', input: { id: 'c1' }, inputHash: 'h', requestedAt: 'x', expiresAt: 'y' },
    ];
    const first = new UiMessageChunkMapper();
    const asked = await messageOf([{ type: 'start', messageId: 'm' }, ...(await mapAll(first, shown)), ...first.end('tool-calls')]);
    expect(asked.message.parts.map((part) => [part.type, (part as { state?: string }).state])).toEqual([['step-start', undefined], ['text', 'done'], ['tool-t', 'approval-requested'], ['tool-t', 'input-streaming']]);
    // The continued response, from after the request: the step it joins is the last one the first showed.
    const after: TurnEvent[] = [call('c2'), result('c2'), result('c1'), { type: 'text-delta', text: 'Done.', step: 2, attempt: 1 }, { type: 'turn-finished', status: 'completed', text: 'Done.', steps: 2, usage }];
    const joined = Math.max(...shown.flatMap((event) => UiMessageChunkMapper.stepOf(event) ?? []));
    expect(joined).toBe(1);
    const next = new UiMessageChunkMapper();
    next.continueStep(joined);
    const { message, errors } = await messageOf([{ type: 'start', messageId: 'm' }, ...(await mapAll(next, after))], asked.message);
    expect(errors).toEqual([]);
    expect(message.parts.map((part) => [part.type, (part as { toolCallId?: string }).toolCallId, (part as { state?: string }).state])).toEqual([
      ['step-start', undefined, undefined],
      ['text', undefined, 'done'],
      ['tool-t', 'c1', 'output-available'],
      ['tool-t', 'c2', 'output-available'],
      ['step-start', undefined, undefined],
      ['text', undefined, 'done'],
    ]);
  });

  it('shows a budget approval as one data part, replaced in place by its decision, and never as a tool part', async () => {
    const mapper = new UiMessageChunkMapper();
    const asked = await mapAll(mapper, [
      { type: 'step-finished', step: 1, finishReason: 'tool-calls', usage, toolCalls: 0 },
      budgetRequested,
      // Were the workflow to publish the budget call's settlement, it would still be no tool chunk.
      { type: 'tool-result', step: 1, toolCallId: 'budget-1', toolName: 'turnpike_budget', outcome: 'approved', output: null, isError: false },
    ]);
    expect(asked).toEqual([{ type: 'data-budget', id: 'apr_b', data: { state: 'requested', approvalId: 'apr_b', toolCallId: 'budget-1', input: budgetInput, inputHash: 'h', reason: 'reached', expiresAt: 'y' } }]);
    const first = await messageOf([{ type: 'start', messageId: 'm' }, ...asked, ...mapper.end('tool-calls')]);
    expect(first.errors).toEqual([]);

    const decision: DecisionRecord = { approvalId: 'apr_b', toolCallId: 'budget-1', toolName: 'turnpike_budget', outcome: 'approved', approved: true, automatic: false, approver: 'alice', decidedAt: 'z', inputHash: 'h', editedInput: { extendBy: { totalTokens: 500 } } };
    const next = new UiMessageChunkMapper();
    const continued = await messageOf(
      [
        { type: 'start', messageId: 'm' },
        UiMessageChunkMapper.budgetDecided(budgetRequested, decision),
        ...(await mapAll(next, [{ type: 'text-delta', text: 'Done', step: 2, attempt: 1 }, { type: 'turn-finished', status: 'completed', text: 'Done', steps: 2, usage }])),
      ],
      first.message,
    );
    expect(continued.errors).toEqual([]);
    const budgetParts = continued.message.parts.filter((part) => part.type === 'data-budget');
    expect(budgetParts).toEqual([
      { type: 'data-budget', id: 'apr_b', data: { state: 'decided', approvalId: 'apr_b', toolCallId: 'budget-1', input: budgetInput, outcome: 'approved', extendBy: { totalTokens: 500 }, approver: 'alice', decidedAt: 'z' } },
    ]);
    expect(continued.message.parts.some((part) => 'toolCallId' in part)).toBe(false);
  });

  it("shows an AI SDK model's sources as source parts only, as the AI SDK's own UI stream does, and a hosted tool as a tool part with its sources", async () => {
    const urls = [{ url: 'https://met.ie/dublin', title: 'met.ie' }, { url: 'https://weather.com/dublin' }];
    const document = { title: 'Forecast notes', mediaType: 'application/pdf', filename: 'notes.pdf' };
    const mapper = new UiMessageChunkMapper();
    const chunks = await mapAll(mapper, [
      { type: 'text-delta', text: 'Rain.', step: 1, attempt: 1 },
      { type: 'provider-tool', step: 1, toolCallId: 'sources-s1', toolName: 'sources', input: {}, output: [...urls, document], isError: false, sources: urls },
      { type: 'provider-tool', step: 1, toolCallId: 'ws_1', toolName: 'web_search', input: { query: 'rain' }, output: { status: 'completed' }, isError: false, sources: [urls[0]] },
    ]);
    const built = await messageOf([{ type: 'start', messageId: 'm' }, ...chunks, ...mapper.end('stop')]);
    expect(built.errors).toEqual([]);
    expect(built.message.parts.filter((part) => part.type !== 'step-start' && part.type !== 'text')).toEqual([
      { type: 'source-url', sourceId: 'sources-s1-0', url: 'https://met.ie/dublin', title: 'met.ie' },
      { type: 'source-url', sourceId: 'sources-s1-1', url: 'https://weather.com/dublin' },
      { type: 'source-document', sourceId: 'sources-s1-document-0', mediaType: 'application/pdf', title: 'Forecast notes', filename: 'notes.pdf' },
      expect.objectContaining({ type: 'tool-web_search', toolCallId: 'ws_1', state: 'output-available', providerExecuted: true }),
      { type: 'source-url', sourceId: 'ws_1-0', url: 'https://met.ie/dublin', title: 'met.ie' },
    ]);
  });

  it('shows the MCP servers a retried step waits for as one data part per step, replaced in place by the next report', async () => {
    const mapper = new UiMessageChunkMapper();
    const down = (attempt: number) => ({ server: 'crm', error: `refused ${attempt}`, since: 'a', giveUpAt: 'b' });
    const chunks = await mapAll(mapper, [
      { type: 'servers-unavailable', step: 1, attempt: 1, servers: [down(1)] },
      { type: 'servers-unavailable', step: 1, attempt: 2, servers: [down(2)] },
      { type: 'text-delta', text: 'Up again', step: 1, attempt: 3 },
      { type: 'turn-finished', status: 'completed', text: 'Up again', steps: 1, usage },
    ]);
    const { message, errors } = await messageOf([{ type: 'start', messageId: 'm' }, ...chunks]);
    expect(errors).toEqual([]);
    expect(message.parts.filter((part) => part.type === 'data-servers-unavailable')).toEqual([
      { type: 'data-servers-unavailable', id: 'servers-unavailable-1', data: { step: 1, attempt: 2, servers: [down(2)] } },
    ]);
  });

  it('shows a vote that decides nothing yet as one data-approval-progress part per approval, replaced by the next', async () => {
    const mapper = new UiMessageChunkMapper();
    const vote = (approver: string) => ({ approver, approved: true, votedAt: 't', inputHash: 'h' });
    const progress = (...approvers: string[]) => ({ quorum: 3, denials: 1, votes: approvers.map(vote) });
    const chunks = await mapAll(mapper, [
      { type: 'tool-call', step: 1, toolCallId: 'c1', toolName: 't', input: { a: 1 } },
      { type: 'approval-requested', step: 1, approvalId: 'apr_1', toolCallId: 'c1', toolName: 't', input: { a: 1 }, inputHash: 'h', requestedAt: 'x', expiresAt: 'y' },
      { type: 'approval-progress', step: 1, approvalId: 'apr_1', toolCallId: 'c1', toolName: 't', change: 'vote', progress: progress('alice') },
      { type: 'approval-progress', step: 1, approvalId: 'apr_1', toolCallId: 'c1', toolName: 't', change: 'vote', progress: progress('alice', 'bob') },
    ]);
    const { message, errors } = await messageOf([{ type: 'start', messageId: 'm' }, ...chunks]);
    expect(errors).toEqual([]);
    expect(message.parts.filter((part) => part.type === 'data-approval-progress')).toEqual([
      { type: 'data-approval-progress', id: 'approval-progress-apr_1', data: { approvalId: 'apr_1', toolCallId: 'c1', change: 'vote', progress: progress('alice', 'bob') } },
    ]);
  });

  it('says a denied budget approval stopped, with no extension', () => {
    const decision: DecisionRecord = { approvalId: 'apr_b', toolCallId: 'budget-1', toolName: 'turnpike_budget', outcome: 'denied', approved: false, automatic: false, reason: 'enough', decidedAt: 'z', inputHash: 'h' };
    expect(UiMessageChunkMapper.budgetDecided(budgetRequested, decision)).toEqual({
      type: 'data-budget',
      id: 'apr_b',
      data: { state: 'decided', approvalId: 'apr_b', toolCallId: 'budget-1', input: budgetInput, outcome: 'denied', reason: 'enough', decidedAt: 'z' },
    });
  });

  it('streams a typed answer as partial objects in one data part, then the validated object; the text stays', async () => {
    const mapper = new UiMessageChunkMapper({ typedOutput: parse });
    const chunks = [
      ...mapper.startOutput(),
      ...(await mapAll(mapper, [
        { type: 'text-delta', text: '{"city": "Lis', step: 1, attempt: 1 },
        { type: 'text-delta', text: 'bon", ', step: 1, attempt: 1 },
        { type: 'text-delta', text: '"days": 4}', step: 1, attempt: 1 },
        { type: 'step-finished', step: 1, finishReason: 'stop', usage, toolCalls: 0 },
        { type: 'turn-finished', status: 'completed', text: '{"city": "Lisbon", "days": 4}', steps: 1, usage, output: { city: 'Lisbon', days: 4 } },
      ])),
    ];
    const partials = chunks.flatMap((chunk) => (chunk.type === 'data-output' && chunk.data.state === 'streaming' && chunk.data.partial ? [chunk.data.partial] : []));
    expect(partials).toEqual([{ city: 'Lis' }, { city: 'Lisbon' }, { city: 'Lisbon', days: 4 }]);
    const { message, errors } = await messageOf([{ type: 'start', messageId: 'm' }, ...chunks]);
    expect(errors).toEqual([]);
    expect(message.parts.filter((part) => part.type === 'data-output')).toEqual([{ type: 'data-output', id: 'output', data: { state: 'done', output: { city: 'Lisbon', days: 4 } } }]);
    expect(message.parts.find((part) => part.type === 'text')).toMatchObject({ text: '{"city": "Lisbon", "days": 4}' });
  });

  it('starts the partial object over on a retried attempt', async () => {
    const mapper = new UiMessageChunkMapper({ typedOutput: parse });
    const chunks = await mapAll(mapper, [
      { type: 'text-delta', text: '{"city": "Rome"', step: 1, attempt: 1 },
      { type: 'step-retry', step: 1, attempt: 2 },
      { type: 'text-delta', text: '{"city": "Oslo"', step: 1, attempt: 2 },
    ]);
    expect(chunks.filter((chunk) => chunk.type === 'data-output').map((chunk) => chunk.data)).toEqual([
      { state: 'streaming', step: 1, partial: { city: 'Rome' } },
      { state: 'streaming', step: 1, partial: { city: 'Oslo' } },
    ]);
  });

  it('ends an invalid-output turn with its errors in the data part, an error and finishReason error', async () => {
    const mapper = new UiMessageChunkMapper({ typedOutput: parse });
    const chunks = await mapAll(mapper, [
      { type: 'text-delta', text: '{"city": "Lisbon"}', step: 1, attempt: 1 },
      { type: 'turn-finished', status: 'invalid-output', text: '{"city": "Lisbon"}', steps: 1, usage, outputErrors: ['days: Invalid input: expected number, received undefined'] },
    ]);
    expect(chunks.slice(-5)).toEqual([
      { type: 'text-end', id: 'text-1-1' },
      { type: 'finish-step' },
      { type: 'data-output', id: 'output', data: { state: 'invalid', text: '{"city": "Lisbon"}', errors: ['days: Invalid input: expected number, received undefined'] } },
      { type: 'error', errorText: 'The answer did not match the output schema (invalid-output): days: Invalid input: expected number, received undefined' },
      { type: 'finish', finishReason: 'error' },
    ]);
    const { message, errors } = await messageOf([{ type: 'start', messageId: 'm' }, ...chunks]);
    expect(errors).toEqual(['Error: The answer did not match the output schema (invalid-output): days: Invalid input: expected number, received undefined']);
    expect(message.parts.filter((part) => part.type === 'data-output')).toEqual([
      { type: 'data-output', id: 'output', data: { state: 'invalid', text: '{"city": "Lisbon"}', errors: ['days: Invalid input: expected number, received undefined'] } },
    ]);
  });
});
