/**
 * turnpike/testing, its own tests: a turn on a scripted model in Temporal's time-skipping test
 * server (fetched from Maven Central, testing/test-server.ts), the helpers that decide what it
 * parks, a 24-hour expiry skipped at once, the scripted model's strictness, and a teardown that
 * leaves no server process behind.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineClientTool, defineTool } from '../../index.js';
import { call, createTestEnvironment, expectTurn, script, text, TurnExpectationError, type TestEnvironment } from '../../testing/index.js';

const refunds: Array<{ orderId: string; amount: number }> = [];

const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refund an amount on an order.',
  inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
  approval: ({ amount }) => (amount <= 100 ? 'approved' : { decision: 'user-approval', reason: 'refunds above $100 need a lead' }),
  execute: async ({ orderId, amount }) => {
    refunds.push({ orderId, amount });
    return { refunded: amount };
  },
});

const askUser = defineClientTool({ name: 'ask_user', description: 'Ask the user.', inputSchema: z.object({ question: z.string() }), outputSchema: z.object({ answer: z.string() }) });

/** The test server's processes on this machine, by the port each listens on. */
function testServerPorts(): string[] {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return [...out.matchAll(/io\.temporal\.testserver\.TestServer (\d+)/g)].map((match) => match[1]!);
}

let env: TestEnvironment;
let port: string;

beforeAll(async () => {
  env = await createTestEnvironment({ tools: [issueRefund, askUser] });
  port = env.temporal.address.split(':').at(-1)!;
});

afterAll(async () => {
  await env?.teardown();
});

describe('a turn on a scripted model, in the time-skipping test server', () => {
  it('runs a refund under $100 at once (the policy approves it) and parks one above for a person', async () => {
    const small = await env.runTurn({ model: script([[call('issue_refund', { orderId: 'A', amount: 40 })], text('Refunded $40.')]), prompt: 'refund A' });
    expectTurn(await small.result()).toHaveStatus('completed').toHaveOutcome('issue_refund', 'approved').toHaveDecision('issue_refund', { automatic: true, approved: true }).toHaveText('Refunded $40.').toHaveOneResultPerCall();
    expect(refunds).toContainEqual({ orderId: 'A', amount: 40 });

    const large = await env.runTurn({ model: script([[call('issue_refund', { orderId: 'B', amount: 250 })], text('Refunded $250.')]), prompt: 'refund B' });
    const parked = await env.nextParked(large);
    expect(parked).toMatchObject({ kind: 'approval', toolName: 'issue_refund', input: { orderId: 'B', amount: 250 }, reason: 'refunds above $100 need a lead' });
    expect(refunds).not.toContainEqual({ orderId: 'B', amount: 250 });
    await env.approve(parked, { approver: 'lead@example.com' });
    expectTurn(await large.result())
      .toHaveStatus('completed')
      .toHaveDecision('issue_refund', { outcome: 'approved', automatic: false, approver: 'lead@example.com' })
      .toHaveSentModel('issue_refund', { output: { refunded: 250 } });
    expect(refunds).toContainEqual({ orderId: 'B', amount: 250 });
  });

  it('tells the model a denial and its reason', async () => {
    const turn = await env.runTurn({ model: script([[call('issue_refund', { orderId: 'C', amount: 500 })], text('I could not refund it.')]), prompt: 'refund C' });
    await env.deny(await env.nextParked(turn), 'not our fault');
    const result = await turn.result();
    expectTurn(result).toHaveOutcome('issue_refund', 'denied').toHaveDecision('issue_refund', { outcome: 'denied', reason: 'not our fault' }).toHaveOneResultPerCall();
    const seen = JSON.stringify(turn.requests()[1]);
    expect(seen).toContain('not our fault');
    expect(refunds.some((refund) => refund.orderId === 'C')).toBe(false);
  });

  it('answers a client tool', async () => {
    const turn = await env.runTurn({ model: script([[call('ask_user', { question: 'Which order?' })], text('Thanks.')]), prompt: 'help' });
    const parked = await env.nextParked(turn);
    expect(parked.kind).toBe('client-tool');
    await env.submitToolResult(parked, { answer: '1001' });
    expectTurn(await turn.result()).toHaveOutcome('ask_user', 'client').toHaveSentModel('ask_user', { output: { answer: '1001' } });
  });

  it('expires a 24-hour approval at once when the clock is skipped 25 hours, and the model is told', async () => {
    const turn = await env.runTurn({ model: script([[call('issue_refund', { orderId: 'D', amount: 300 })], text('It expired.')]), prompt: 'refund D' });
    const parked = await env.nextParked(turn);
    const before = await env.temporal.currentTimeMs();
    await env.sleep('25h');
    const result = await turn.result();
    expect(await env.temporal.currentTimeMs()).toBeGreaterThanOrEqual(before + 24 * 3600_000);
    expectTurn(result).toHaveStatus('completed').toHaveOutcome('issue_refund', 'expired').toHaveDecision('issue_refund', { approvalId: parked.approvalId, outcome: 'expired' });
    expect(turn.requests()[1]!.at(-1)).toMatchObject({ role: 'tool', content: [{ toolCallId: parked.toolCallId, isError: true, output: expect.stringContaining('expired') }] });
  });

  it('fails an expectation with what the turn had', async () => {
    const turn = await env.runTurn({ model: script([text('Nothing to do.')]), prompt: 'hi' });
    const result = await turn.result();
    expect(() => expectTurn(result).toHaveCalled('issue_refund')).toThrow(TurnExpectationError);
    expect(() => expectTurn(result).toHaveText('something else')).toThrow(/Nothing to do/);
  });
});

describe("the scripted model holds turns to what the real APIs refuse", () => {
  it('refuses a history with a tool call that has no result', async () => {
    const turn = await env.runTurn({
      model: script([text('ok')]),
      messages: [
        { role: 'user', content: 'refund' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x1', toolName: 'issue_refund', input: { orderId: 'E', amount: 1 } }] },
        { role: 'user', content: 'and now?' },
      ],
    });
    await expect(turn.result()).rejects.toThrow();
    expect(JSON.stringify(await describeFailure(turn.turnId))).toContain('tool call x1 (issue_refund) has 0 results');
  });

  it('refuses a call id used twice, a tool the turn does not offer, and a step past the end of the script', async () => {
    const twice = await env.runTurn({ model: script([[call('issue_refund', { orderId: 'F', amount: 1 }, { toolCallId: 'same' })], [call('issue_refund', { orderId: 'F', amount: 2 }, { toolCallId: 'same' })]]), prompt: 'x' });
    await expect(twice.result()).rejects.toThrow();
    expect(JSON.stringify(await describeFailure(twice.turnId))).toContain('with id same, which an earlier call used');

    const unoffered = await env.runTurn({ model: script([[call('delete_everything', {})]]), prompt: 'x', tools: ['issue_refund'] });
    await expect(unoffered.result()).rejects.toThrow();
    expect(JSON.stringify(await describeFailure(unoffered.turnId))).toContain('calls delete_everything, which the turn does not offer');

    const short = await env.runTurn({ model: script([[call('issue_refund', { orderId: 'G', amount: 1 })]]), prompt: 'x' });
    await expect(short.result()).rejects.toThrow();
    expect(JSON.stringify(await describeFailure(short.turnId))).toContain('asked for step 2 and the script has 1');
  });
});

/** The failure a turn's workflow ended with (its cause chain, as text). */
async function describeFailure(turnId: string): Promise<unknown> {
  try {
    await env.turnpike.turn(turnId).result();
    return 'no failure';
  } catch (error) {
    const chain: string[] = [];
    for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) chain.push(cause.message);
    return chain;
  }
}

describe('teardown', () => {
  it('leaves no test server process behind', async () => {
    const second = await createTestEnvironment({ tools: [issueRefund] });
    const secondPort = second.temporal.address.split(':').at(-1)!;
    expect(testServerPorts()).toContain(secondPort);
    await second.teardown();
    expect(testServerPorts()).not.toContain(secondPort);
    expect(testServerPorts()).toContain(port);
  });
});
