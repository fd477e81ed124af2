/**
 * forkTurn on the real dev server with the strict OpenAI fake: a 12-step turn forked at step 7
 * with another model starts from steps 1–7 exactly, runs none of their tools again, and leaves the
 * original as it was.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { transcriptQuery } from '../../workflows/messages/definitions.js';
import type { ModelSettings } from '../../workflows/types/index.js';
import { noteStarted } from '../support/history-recorder.js';
import { executions, executionsOf, testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });

const original: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256 };
const other: ModelSettings = { provider: 'openai', model: 'gpt-4.1', maxTokens: 256 };

describe('forkTurn', () => {
  it('forks a 12-step turn at step 7 with another model: steps 1–7 carried exactly, none of their tools run again, the original unchanged', async () => {
    const { fake, client } = suite;
    const turnId = `fork-${randomUUID()}`;
    const steps = Array.from({ length: 11 }, (_, index) => ({ toolCalls: [{ name: 'record_action', input: { action: `step-${index + 1}` } }] }));
    fake.script('openai', [...steps, { text: 'done after 12 steps' }]);
    noteStarted(await client.startTurn({ model: original, system: 'Work step by step.', messages: [{ role: 'user', content: 'Do twelve steps.' }], maxSteps: 20 }, { turnId }));
    const result = await client.turnResult(turnId);
    expect(result.steps).toBe(12);
    const transcriptBefore = await client.turn(turnId).query(transcriptQuery, {});
    const requests = fake.requests.filter((request) => request.provider === 'openai');
    expect(requests).toHaveLength(12);
    const ranBefore = executions.length;
    expect(executionsOf(turnId)).toHaveLength(11);

    fake.script('openai', [{ text: 'the other model answers after step 7' }]);
    const fork = await client.forkTurn(turnId, { atStep: 7, model: other, startedBy: 'alice' });
    noteStarted(client.turn(fork.turnId));
    expect(fork.forkOf).toEqual({ turnId, atStep: 7 });
    const forked = await client.turnResult(fork.turnId);
    expect(forked.text).toBe('the other model answers after step 7');

    const first = fake.requests.filter((request) => request.provider === 'openai').at(-1)!;
    expect(first.errors).toEqual([]);
    expect(first.body.model).toBe('gpt-4.1');
    // The original's 8th request is what the model saw after step 7: the fork's first carries exactly that.
    expect(first.body.messages).toEqual(requests[7].body.messages);
    expect(JSON.stringify(first.body.messages)).toContain('step-7');
    expect(JSON.stringify(first.body.messages)).not.toContain('step-8');
    // No tool ran again, and the original is as it was.
    expect(executions.length).toBe(ranBefore);
    expect(executionsOf(fork.turnId)).toEqual([]);
    expect(await client.turnResult(turnId)).toEqual(result);
    expect(await client.turn(turnId).query(transcriptQuery, {})).toEqual(transcriptBefore);

    // The CLI forks the same turn at step 7 on the other model, and prints the fork.
    fake.script('openai', [{ text: 'the CLI fork answers' }]);
    let stdout = '';
    let stderr = '';
    const code = await runCli(['turns', 'fork', turnId, '--at', '7', '--model', 'openai:gpt-4.1', '--id', `${turnId}/cli-fork`, '--json'], {
      client,
      stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false },
      stderr: { write: (chunk: string) => (stderr += chunk) },
    });
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ turnId: `${turnId}/cli-fork`, forkOf: { turnId, atStep: 7 }, messages: 1 + 7 * 2 });
    noteStarted(client.turn(`${turnId}/cli-fork`));
    expect((await client.turnResult(`${turnId}/cli-fork`)).text).toBe('the CLI fork answers');
    expect(fake.requests.filter((request) => request.provider === 'openai').at(-1)!.body.messages).toEqual(requests[7].body.messages);
    expect(executions.length).toBe(ranBefore);

    // The original lists its forks (visibility: a moment later), and so does the CLI.
    const listed = await eventually(() => client.forks(turnId), (forks) => forks.length === 2);
    expect(listed.map(({ turnId: id, atStep, status, startedBy }) => ({ id, atStep, status, startedBy }))).toEqual([
      { id: fork.turnId, atStep: 7, status: 'COMPLETED', startedBy: 'alice' },
      { id: `${turnId}/cli-fork`, atStep: 7, status: 'COMPLETED', startedBy: undefined },
    ]);
    stdout = '';
    expect(await runCli(['turns', 'forks', turnId, '--json'], { client, stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false }, stderr: { write: (chunk: string) => (stderr += chunk) } }), stderr).toBe(0);
    expect((JSON.parse(stdout) as Array<{ turnId: string }>).map((listedFork) => listedFork.turnId)).toEqual([fork.turnId, `${turnId}/cli-fork`]);
    expect(await client.forks(fork.turnId)).toEqual([]);

    const error = await client.forkTurn(turnId, { atStep: 12 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as Error).message).toMatch(/has no step 12 ending in tool results/);
  });

  it("forks a turn whose transcript is over 2 MB: the fork's start payload holds a reference of about a kilobyte (not a claim of the transcript), and its first step reads the 2.4 MB from the original", async () => {
    const { fake, client } = suite;
    const turnId = `fork-big-${randomUUID()}`;
    // 2.4 MB of text that gzip cannot bring under Temporal's 2 MB payload limit.
    const big = randomBytes(1_800_000).toString('base64');
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'big-step-1' } }] }, { text: 'read it all' }]);
    noteStarted(await client.startTurn({ model: original, messages: [{ role: 'user', content: big }], maxSteps: 4 }, { turnId }));
    expect((await client.turnResult(turnId)).steps).toBe(2);

    fake.script('openai', [{ text: 'the fork read it too' }]);
    const fork = await client.forkTurn(turnId, { atStep: 1, model: other });
    noteStarted(client.turn(fork.turnId));
    expect((await client.turnResult(fork.turnId)).text).toBe('the fork read it too');
    const first = fake.requests.filter((request) => request.provider === 'openai').at(-1)!;
    expect(first.errors).toEqual([]);
    expect(first.body.messages.some((message: { content?: unknown }) => message.content === big)).toBe(true);
    expect(JSON.stringify(first.body.messages)).toContain('big-step-1');

    // The fork's start event holds the prefix's reference (forkOf), not the transcript nor a claim of it.
    const history = await client.turn(fork.turnId).fetchHistory();
    const payload = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
    expect(Buffer.from(payload.metadata!.encoding!).toString()).toBe('json/plain');
    expect(payload.data!.length).toBeLessThan(2_000);
    expect(JSON.parse(Buffer.from(payload.data!).toString())).toMatchObject({ messages: [], forkOf: { workflowId: turnId, atStep: 1, prefixLength: 3, userMessage: big.slice(0, 1_000) } });
  });
});

/** Polls `read` until `done` holds (visibility is eventually consistent), at most 30 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    if (done(value) || attempt >= 60) return value;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
