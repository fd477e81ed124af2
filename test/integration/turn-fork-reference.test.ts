/**
 * A fork's prefix shared by reference, on the real dev server with the strict OpenAI fake: the
 * fork's start input and history hold a reference (`forkOf`), not the original's messages; its
 * model steps still see them exactly (read from the original, checked against the hash); every
 * reader of the fork's transcript sees the whole of it; a fork of a fork reads through both; and
 * a fork whose original was deleted fails its next model step with `ForkOriginalGone`.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { approveToolCallUpdate, callContextQuery, transcriptQuery } from '../../workflows/messages/definitions.js';
import type { AgentTurnInput, Message, ModelSettings, ModelStepRequest } from '../../workflows/types/index.js';
import { noteStarted } from '../support/history-recorder.js';
import { executions, executionsOf, testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes, waitForPending } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });

const original: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256 };
const other: ModelSettings = { provider: 'openai', model: 'gpt-4.1', maxTokens: 256 };

function openaiRequests() {
  return suite.fake.requests.filter((request) => request.provider === 'openai');
}

/** Payloads as the client's data converter reads them (codecs undone). */
async function decode<T>(client: TurnpikeClient, payloads: Payload[]): Promise<T[]> {
  const { payloadConverter, payloadCodecs } = client.client.options.loadedDataConverter;
  for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  return payloads.map((payload) => payloadConverter.fromPayload<T>(payload));
}

/** What a fork's history holds: its start payload, its first model step's input, and the whole history's size. */
async function historyOf(client: TurnpikeClient, turnId: string) {
  const history = await client.turn(turnId).fetchHistory();
  const start = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0] as Payload;
  const [input] = await decode<AgentTurnInput>(client, [start]);
  const scheduled = history.events!.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')!;
  const [firstStep] = await decode<ModelStepRequest>(client, scheduled.activityTaskScheduledEventAttributes!.input!.payloads! as Payload[]);
  return { startBytes: temporal.api.common.v1.Payload.encode(start).finish().length, input, firstStep, historyBytes: temporal.api.history.v1.History.encode(history).finish().length };
}

describe('a fork shares its prefix by reference', () => {
  it('forks a 12-step turn at 7: the first request carries steps 1–7 exactly, its start input and history hold no prefix, its transcript reads whole; a fork of the fork too', async () => {
    const { fake, client } = suite;
    const turnId = `fork-ref-${randomUUID()}`;
    // Step 3's tool result is this string (record_action answers `{ done: action }`).
    const distinct = `step-3-${randomUUID()}`;
    const steps = Array.from({ length: 11 }, (_, index) => ({ toolCalls: [{ id: `call_step_${index + 1}`, name: 'record_action', input: { action: index === 2 ? distinct : `step-${index + 1}` } }] }));
    fake.script('openai', [...steps, { text: 'done after 12 steps' }]);
    noteStarted(await client.startTurn({ model: original, system: 'Work step by step.', messages: [{ role: 'user', content: 'Do twelve steps.' }], maxSteps: 20 }, { turnId }));
    const result = await client.turnResult(turnId);
    expect(result.steps).toBe(12);
    const transcriptBefore = await client.turn(turnId).query(transcriptQuery, {});
    const requests = openaiRequests();
    expect(requests).toHaveLength(12);
    const ranBefore = executions.length;
    const originalHistory = await client.turn(turnId).fetchHistory();
    const originalBytes = temporal.api.history.v1.History.encode(originalHistory).finish().length;

    // The fork on the other model does one step of its own (repeating step 1's call id, as some providers do), then answers.
    fake.script('openai', [{ toolCalls: [{ id: 'call_step_1', name: 'record_action', input: { action: 'fork-step-1' } }] }, { text: 'the other model answers after step 7' }]);
    const fork = await client.forkTurn(turnId, { atStep: 7, model: other });
    noteStarted(client.turn(fork.turnId));
    expect(fork.messages).toBe(1 + 7 * 2);
    const forked = await client.turnResult(fork.turnId);
    expect(forked.text).toBe('the other model answers after step 7');

    const [first, second] = openaiRequests().slice(12);
    expect(first.errors).toEqual([]);
    expect(first.body.model).toBe('gpt-4.1');
    // The original's 8th request is what the model saw after step 7: the fork's first carries exactly that.
    expect(first.body.messages).toEqual(requests[7].body.messages);
    expect(JSON.stringify(first.body.messages)).toContain(distinct);
    expect(second.body.messages.slice(0, requests[7].body.messages.length)).toEqual(requests[7].body.messages);
    // No tool of steps 1–7 ran again, and the fork's own call repeated step 1's id: it is refused
    // as the original would have refused it (the prefix's ids come with the reference), not run.
    expect(executions.length).toBe(ranBefore);
    expect(executionsOf(fork.turnId)).toEqual([]);
    expect(forked.toolCalls).toMatchObject([{ toolCallId: 'call_step_1_dup2', outcome: 'error', output: expect.stringMatching(/repeated an earlier tool call id/) }]);
    expect(await client.turnResult(turnId)).toEqual(result);
    expect(await client.turn(turnId).query(transcriptQuery, {})).toEqual(transcriptBefore);

    // The fork's start input is a reference, and neither it nor its first step holds the prefix.
    const { runId } = await client.turn(turnId).describe();
    const seen = await historyOf(client, fork.turnId);
    expect(seen.input.messages).toEqual([]);
    expect(seen.input.forkOf).toEqual({ workflowId: turnId, runId, atStep: 7, prefixLength: 15, prefixHash: expect.any(String), toolCallIds: Array.from({ length: 7 }, (_, index) => `call_step_${index + 1}`), userMessage: 'Do twelve steps.' });
    expect(seen.startBytes).toBeLessThan(600);
    expect(JSON.stringify(seen.input)).not.toContain(distinct);
    expect(seen.firstStep.transcript).toMatchObject({ length: 15, from: 15, added: [] });
    expect(JSON.stringify(seen.firstStep)).not.toContain(distinct);
    // Its own two steps and a turn's fixed costs (the start, search attributes on each upsert) come
    // to about a quarter of the original's twelve steps; a fork that copied steps 1–7 would hold
    // more than half the original's bytes.
    expect(seen.historyBytes).toBeLessThan(originalBytes / 3);
    console.log(`fork at 7 of a 12-step turn: start payload ${seen.startBytes} bytes, history ${seen.historyBytes} bytes; the original's history ${originalBytes} bytes`);

    // Every reader sees the whole transcript: the fork's own query answers its part and the reference.
    const page = await client.turn(fork.turnId).query(transcriptQuery, {});
    expect(page).toMatchObject({ messages: [], offset: 0, total: 15 + forked.messages.length, forkOf: seen.input.forkOf });
    const whole: Message[] = [...transcriptBefore.messages.slice(0, 15), ...forked.messages];
    expect(await client.turnTranscript(fork.turnId)).toEqual(whole);
    // So does the CLI: `turns transcript` prints the same messages (JSON), the prefix read from the original.
    let stdout = '';
    let stderr = '';
    const io = { client, stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false }, stderr: { write: (chunk: string) => (stderr += chunk) } };
    expect(await runCli(['turns', 'transcript', fork.turnId, '--json'], io), stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ turnId: fork.turnId, messages: JSON.parse(JSON.stringify(whole)) });
    stdout = '';
    expect(await runCli(['turns', 'transcript', fork.turnId], io), stderr).toBe(0);
    expect(stdout).toContain(distinct);
    expect(stdout).toContain(`messages 0–${whole.length - 1} of ${whole.length}`);
    expect(await runCli(['turns', 'transcript', `no-such-turn-${randomUUID()}`], io)).toBe(4);
    expect((await client.turn(fork.turnId).query(transcriptQuery, { offset: 15 })).messages).toEqual(forked.messages);

    // A fork of the fork, after the fork's own step 1: read through the fork from the original.
    fake.script('openai', [{ text: 'the fork of the fork answers' }]);
    const again = await client.forkTurn(fork.turnId, { atStep: 1, model: original });
    noteStarted(client.turn(again.turnId));
    expect(again.messages).toBe(15 + 2);
    expect((await client.turnResult(again.turnId)).text).toBe('the fork of the fork answers');
    const third = openaiRequests().at(-1)!;
    expect(third.errors).toEqual([]);
    expect(third.body.model).toBe('gpt-4.1-mini');
    expect(third.body.messages).toEqual(second.body.messages);
    const seenAgain = await historyOf(client, again.turnId);
    expect(seenAgain.input.forkOf).toMatchObject({ workflowId: fork.turnId, atStep: 1, prefixLength: 17 });
    expect(JSON.stringify(seenAgain.input)).not.toContain(distinct);
    expect(seenAgain.startBytes).toBeLessThan(600);
    expect(await client.turnTranscript(again.turnId)).toEqual([...whole.slice(0, 17), ...(await client.turnResult(again.turnId)).messages]);
    expect(executions.length).toBe(ranBefore);
  });

  it('a fork that hands over to a new run (continue-as-new) carries forkOf and reads its prefix from the original in the new run', async () => {
    const { fake, client } = suite;
    const turnId = `fork-long-${randomUUID()}`;
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'long-step-1' } }] }, { text: 'done' }]);
    noteStarted(await client.startTurn({ model: original, messages: [{ role: 'user', content: 'One step.' }], maxSteps: 30, historyLimit: { events: 100 } }, { turnId }));
    expect((await client.turnResult(turnId)).steps).toBe(2);
    const prefix = (await client.turnTranscript(turnId)).slice(0, 3);

    // The fork takes the original's historyLimit: 14 steps of its own pass 100 events.
    const own = Array.from({ length: 14 }, (_, index) => ({ toolCalls: [{ name: 'record_action', input: { action: `long-fork-${index + 1}` } }] }));
    fake.script('openai', [...own, { text: 'the long fork answers' }]);
    const asked = openaiRequests().length;
    const fork = await client.forkTurn(turnId, { atStep: 1, model: other });
    noteStarted(client.turn(fork.turnId));
    const forked = await client.turnResult(fork.turnId);
    expect(forked.text).toBe('the long fork answers');
    expect(forked.steps).toBe(15);

    const latest = await client.turn(fork.turnId).fetchHistory();
    const started = latest.events![0].workflowExecutionStartedEventAttributes!;
    expect(started.continuedExecutionRunId).toBeTruthy();
    const [input] = await decode<AgentTurnInput>(client, started.input!.payloads! as Payload[]);
    expect(input.forkOf).toMatchObject({ workflowId: turnId, atStep: 1, prefixLength: 3 });
    expect(input.carried?.handOvers).toBeGreaterThanOrEqual(1);
    // Every request of the fork, before and after the hand-over, starts with the original's prefix.
    const requests = openaiRequests().slice(asked);
    expect(requests).toHaveLength(15);
    for (const request of requests) {
      expect(request.errors).toEqual([]);
      expect(request.body.messages.slice(0, requests[0].body.messages.length)).toEqual(requests[0].body.messages);
    }
    expect(JSON.stringify(requests[0].body.messages)).toContain('long-step-1');
    expect(await client.turnTranscript(fork.turnId)).toEqual([...prefix, ...forked.messages]);
  });

  it('a fork whose original was deleted fails its next model step with ForkOriginalGone, not a hang', { timeout: 180_000 }, async () => {
    const { fake, client, turnpike } = suite;
    const turnId = `fork-gone-${randomUUID()}`;
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'gone-step-1' } }] }, { text: 'done' }]);
    noteStarted(await client.startTurn({ model: original, messages: [{ role: 'user', content: 'One step.' }], maxSteps: 4 }, { turnId }));
    expect((await client.turnResult(turnId)).steps).toBe(2);

    // The fork parks on an approval after its first step, which read the prefix from the original.
    fake.script('openai', [{ toolCalls: [{ name: 'guarded_action', input: { target: 'alpha', count: 1 } }] }, { text: 'never asked' }]);
    const fork = await client.forkTurn(turnId, { atStep: 1, model: other });
    noteStarted(client.turn(fork.turnId));
    const [parked] = await waitForPending(client.turn(fork.turnId), 1);
    const asked = openaiRequests().length;
    // Its tools are told the prefix's user message, which the fork does not hold.
    expect((await client.turn(fork.turnId).query(callContextQuery, { toolCallId: parked.toolCallId })).userMessage).toBe('One step.');

    // A fresh worker has no cached transcript, so the fork's next step must read the original again.
    await turnpike.stopWorker();
    await turnpike.startWorker();
    await client.client.workflowService.deleteWorkflowExecution({ namespace: client.client.options.namespace, workflowExecution: { workflowId: turnId } });
    // The server deletes a closed run in the background: on the dev server it takes 20–35 s.
    let gone = false;
    for (const started = Date.now(); !gone && Date.now() - started < 90_000; ) {
      gone = await client.turn(turnId).describe().then(() => false, (error: unknown) => error instanceof WorkflowNotFoundError);
      if (!gone) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(gone, 'the original turn is deleted').toBe(true);

    await client.turn(fork.turnId).executeUpdate(approveToolCallUpdate, { args: [{ approvalId: parked.approvalId!, approved: true, approver: 'bob' }] });
    const failure = await client.turnResult(fork.turnId).then(() => undefined, (error: unknown) => error);
    const types: string[] = [];
    for (let cause = failure as { cause?: unknown; type?: string } | undefined; cause; cause = cause.cause as typeof cause) if (cause.type) types.push(cause.type);
    expect(types).toContain('ForkOriginalGone');
    expect(String((failure as { cause?: { cause?: Error } }).cause?.cause?.message)).toMatch(new RegExp(`fork of turn ${turnId} at step 1 .* it is gone`));
    // The model was not asked again; the approved call ran once.
    expect(openaiRequests()).toHaveLength(asked);
    expect(executionsOf(fork.turnId).map((execution) => execution.toolName)).toEqual(['guarded_action']);
  });
});
