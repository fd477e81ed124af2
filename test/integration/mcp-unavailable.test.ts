/**
 * A turn that names a tool of an MCP server that is down: its first model step is retried while
 * the turn's `turnState` (`waitingForServers`) and stream (`servers-unavailable`) name the server
 * and the error, and it fails with `McpServerUnavailable`, not retried, once the server's
 * `unavailableTimeout` has passed; a server that comes up within it lets the turn go on.
 * A real worker and dev server, the fake OpenAI provider, and server-everything over streamable
 * HTTP at a port where nothing listens until the recovery test starts it there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { freePort } from '../../scripts/dev-server.js';
import { transcriptQuery, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import type { Message, ToolServersWait } from '../../workflows/types/index.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { startTurnpike, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let server: ChildProcess | undefined;
let downPort: number;
let laterPort: number;

beforeAll(async () => {
  fake = await useFakeProviders();
  [downPort, laterPort] = [await freePort(), await freePort()];
  turnpike = await startTurnpike({
    tools: [],
    mcpServers: {
      // Nothing ever listens here; the turn gives up on it after 3 s.
      broken: { url: `http://127.0.0.1:${downPort}/mcp`, unavailableTimeout: '3s' },
      // Nothing listens here until the recovery test starts server-everything; a long bound.
      later: { url: `http://127.0.0.1:${laterPort}/mcp`, unavailableTimeout: '5m' },
    },
  });
});

afterAll(async () => {
  server?.kill();
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

function startTurn(text: string, tools: string[]) {
  // The turn's own retry policy for its model step (10 attempts, 1 s doubling to 1 min): without
  // the bound, a down server would hold it for minutes.
  return turnpike.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, text, tools });
}

async function eventsOf(turnId: string): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const record of new TurnpikeClient({ client: turnpike.client }).turnEvents(turnId)) events.push(record.event);
  return events;
}

/** Tool calls of the messages without exactly one result. */
function unansweredCalls(messages: Message[]): string[] {
  const results = messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : []));
  const calls = messages.flatMap((message) => (message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : []));
  return calls.filter((id) => results.filter((result) => result === id).length !== 1);
}

describe('a turn that names a tool of an MCP server that is down', () => {
  it('names the server and the error in its state and stream while it waits, and fails with McpServerUnavailable at the bound', async () => {
    const started = Date.now();
    const handle = await startTurn('echo on a server that is down', ['broken__echo']);
    // From the first attempt's failure, not after the retries: the activity tells the turn.
    const waiting = await waitForState(handle, (state) => state.waitingForServers !== undefined, 5_000);
    expect(waiting.status).toBe('running');
    expect(waiting.waitingForServers).toMatchObject({ step: 1, servers: [{ server: 'broken', error: expect.stringMatching(/fetch failed|ECONNREFUSED|connect/i) }] });
    const [wait] = waiting.waitingForServers!.servers;
    expect(Date.parse(wait.giveUpAt) - Date.parse(wait.since)).toBe(3_000);

    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    const endedAfterMs = Date.now() - started;
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const activity = (failure as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    // Ended by the bound, not by the retry policy's 10 attempts.
    expect((activity as ActivityFailure).retryState).toBe(RetryState.NON_RETRYABLE_FAILURE);
    const cause = (activity as ActivityFailure).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('McpServerUnavailable');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toMatch(/^MCP server "broken" could not list its tools: .*the step gave up at its unavailableTimeout\)$/);
    expect(fake.requests.filter((request) => request.provider === 'openai')).toEqual([]);

    // One report per failed attempt, from the first on; the turn's state keeps the last.
    const reports = (await eventsOf(handle.workflowId)).filter((event): event is Extract<TurnEvent, { type: 'servers-unavailable' }> => event.type === 'servers-unavailable');
    const attempts = reports.map((report) => report.attempt);
    console.log(`mcp-unavailable: the down server's turn failed ${endedAfterMs} ms after it started (bound 3 s), after ${attempts.length} attempts`);
    expect(attempts[0]).toBe(1);
    expect(attempts).toEqual(attempts.map((_, index) => index + 1));
    expect(attempts.length).toBeLessThan(10);
    expect(reports.every((report) => report.servers.map((down) => down.server).join() === 'broken')).toBe(true);
    const final = await handle.query(turnStateQuery);
    const { type: _type, ...last } = reports.at(-1)!;
    expect(final.waitingForServers).toEqual(last satisfies ToolServersWait);
    // No call was left without its result (the step failed before the model was asked).
    const { messages } = await handle.query(transcriptQuery);
    expect(unansweredCalls(messages)).toEqual([]);
  });

  it('goes on when the server comes up within the bound', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'later__echo', input: { message: 'back' } }] }, { text: 'It came up.' }]);
    const handle = await startTurn('echo on a server that comes up', ['later__echo']);
    const waiting = await waitForState(handle, (state) => state.waitingForServers !== undefined, 5_000);
    expect(waiting.waitingForServers?.servers.map((down) => down.server)).toEqual(['later']);

    server = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(laterPort) }, stdio: ['ignore', 'ignore', 'pipe'] });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'It came up.' });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([['later__echo', 'executed']]);
    expect(unansweredCalls(result.messages)).toEqual([]);
    // The step described the tools: the wait is over.
    expect((await handle.query(turnStateQuery)).waitingForServers).toBeUndefined();
    expect((await eventsOf(handle.workflowId)).some((event) => event.type === 'servers-unavailable')).toBe(true);
  });
});
