/**
 * The nested turn events route (`GET /api/turns/:id/events?nested=true`) read live: a sub-agent's
 * words reach the reader through the live channel, under the child's turn id, while every durable
 * read of the child is held; a reader that drops at a live record of the child resumes from its
 * `Last-Event-ID` (a nested cursor with live entries) with every event of each stream once, in
 * order. Real dev server, the strict OpenAI fake streaming at a model's pace, an agent tool.
 */
import { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { InProcessLiveDeltas } from '../../activities/live-deltas.js';
import type { NestedTurnEventRecord } from '../../client/nested-turn-events.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { shown, words } from '../support/live-view.js';
import { serveApi } from '../support/api-server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { testTools } from '../support/test-tools.js';
import { queryGate } from '../support/query-gate.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const AUTH = { authorization: 'Bearer alice-token' };
const MODEL = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 } as const;
const researcher = defineAgentTool({
  name: 'live_researcher',
  description: 'Researches a target.',
  inputSchema: z.object({ target: z.string() }),
  agent: { model: MODEL, system: 'You are the researcher.', tools: [] },
  prompt: (input) => `Research ${input.target}.`,
});

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
const channel = new InProcessLiveDeltas();
const apis: FastifyInstance[] = [];

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: [...testTools, researcher], liveDeltas: channel });
});
afterAll(async () => {
  for (const api of apis) await api.close();
  await turnpike?.stop();
  await fake?.restore();
});
beforeEach(() => fake.reset());

async function serveLive(temporal: Client = turnpike.client): Promise<string> {
  const client = new TurnpikeClient({ client: temporal, taskQueue: turnpike.taskQueue, liveDeltas: channel });
  const served = await serveApi(turnpike, { client });
  apis.push(served.api);
  return served.base;
}

const CHILD_TEXT = words(60, 'c');
const PARENT_TEXT = words(20, 'p');

/**
 * The parent calls the researcher, whose one step streams its text 10 ms a token; then the parent
 * answers. The child's reply waits 2 s, so a reader has found its `agent-started` and listens.
 */
async function startParent() {
  fake.script('openai', [
    { toolCalls: [{ id: 'call_research', name: researcher.name, input: { target: 'prod-db' } }] },
    { text: CHILD_TEXT, delayMs: 2_000, stream: { eventIntervalMs: 10 } },
    { text: PARENT_TEXT, stream: { eventIntervalMs: 10 } },
  ]);
  const handle = await turnpike.startTurn({ model: MODEL, text: 'Look into prod-db.', tools: [researcher.name], startedBy: 'alice' });
  return { handle, childId: `${handle.workflowId}/call_research` };
}

const recordOf = (message: SseMessage) => JSON.parse(message.data) as NestedTurnEventRecord;
const nestedUrl = (base: string, turnId: string) => `${base}/api/turns/${encodeURIComponent(turnId)}/events?nested=true`;

/** What a person sees of each stream (the parent's own under `""`), whichever path brought it. */
function shownByStream(records: NestedTurnEventRecord[]) {
  const streams = new Map<string, NestedTurnEventRecord[]>();
  for (const record of records) streams.set(record.turnId ?? '', [...(streams.get(record.turnId ?? '') ?? []), record]);
  return Object.fromEntries([...streams].map(([turnId, each]) => [turnId, shown(each)]));
}

/** The finished turn with its child, read nested the durable way. */
async function durableNestedRead(turnId: string): Promise<NestedTurnEventRecord[]> {
  const records: NestedTurnEventRecord[] = [];
  for await (const record of new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).nestedTurnEvents(turnId)) records.push(record);
  return records;
}

describe('the nested turn events SSE route, live', () => {
  it("sends a child turn's text while every durable read of the child is held, then confirms it without repeating it", async () => {
    const gate = queryGate(turnpike.client, (workflowId) => workflowId.includes('/'));
    const base = await serveLive(gate.client);
    const { handle, childId } = await startParent();
    let childText = '';
    let openedByReader = false;
    let childDurableBeforeOpen = -1;
    const records: NestedTurnEventRecord[] = [];
    const reading = readSseFrom(nestedUrl(base, handle.workflowId), AUTH, (message) => {
      if (message.event !== 'message') return message.event === 'end';
      const record = recordOf(message);
      records.push(record);
      if (record.turnId === childId && record.event.type === 'text-delta') childText += record.event.text;
      if (gate.closed && childText === CHILD_TEXT) {
        openedByReader = true;
        childDurableBeforeOpen = records.filter((each) => each.turnId === childId && each.live === undefined).length;
        gate.open();
      }
      return false;
    });
    await handle.result();
    gate.open();
    const { status, messages } = await reading;
    expect(status).toBe(200);
    expect(messages.at(-1)!.event).toBe('end');
    // The child's whole text reached the browser before any durable read of the child answered.
    expect(openedByReader).toBe(true);
    expect(childDurableBeforeOpen).toBe(0);
    expect(shownByStream(records)).toEqual(shownByStream(await durableNestedRead(handle.workflowId)));
    // Each id is the record's cursor; a live child record's names what the child showed ahead.
    const data = messages.filter((message) => message.event === 'message');
    expect(data.every((message) => message.id !== undefined && message.id === recordOf(message).cursor)).toBe(true);
    const liveChild = data.filter((message) => recordOf(message).turnId === childId && recordOf(message).live !== undefined);
    expect(liveChild.length).toBeGreaterThan(0);
    expect(liveChild.every((message) => /~\d+(:\d+)?(_\d+-\d+-\d+)+$/.test(message.id!))).toBe(true);
  });

  it('resumes a reader that drops at a live record of the child from its Last-Event-ID with every event once, in order', async () => {
    const base = await serveLive();
    const { handle, childId } = await startParent();
    const url = nestedUrl(base, handle.workflowId);
    let live = 0;
    const first = await readSseFrom(url, AUTH, (message) => {
      if (message.event !== 'message') return message.event === 'end';
      const record = recordOf(message);
      return record.turnId === childId && record.live !== undefined && record.event.type === 'text-delta' && ++live === 3;
    });
    const cut = first.messages.at(-1)!;
    expect(recordOf(cut)).toMatchObject({ turnId: childId, live: expect.any(Array) });
    expect(cut.id).toContain('_');
    const second = await readSseFrom(url, { ...AUTH, 'last-event-id': cut.id! }, (message) => message.event === 'end');
    expect(second.status).toBe(200);
    expect(second.messages.at(-1)!.event).toBe('end');
    expect(await handle.result()).toMatchObject({ status: 'completed', text: PARENT_TEXT });

    const durable = shownByStream(await durableNestedRead(handle.workflowId));
    expect(durable[childId]!.texts).toEqual({ 1: CHILD_TEXT });
    const all = [...first.messages, ...second.messages].filter((message) => message.event === 'message').map(recordOf);
    expect(shownByStream(all)).toEqual(durable);
  });
});
