/**
 * `expectTurn(result)`: expectations on a turn's result that read the way a reviewer asks about a
 * turn (which tools it called, what was decided, what each call's record says, what the model was
 * sent back), for any test runner: a failed expectation throws a `TurnExpectationError` naming
 * what the turn had instead.
 *
 *   expectTurn(result)
 *     .toHaveStatus('completed')
 *     .toHaveCalled('issue_refund', { amount: 250 })
 *     .toHaveDecision('issue_refund', { outcome: 'denied', reason: 'over the limit' })
 *     .toHaveSentModel('issue_refund', { isError: true })
 *     .toHaveOneResultPerCall();
 */
import { isDeepStrictEqual } from 'node:util';
import type { AgentTurnResult, DecisionRecord, EndedTurnStatus, ToolCallOutcome, ToolCallRecord, ToolResultPart } from '../workflows/types/index.js';

export class TurnExpectationError extends Error {
  override name = 'TurnExpectationError';
}

/** Whether `actual` holds `expected`: objects by the keys `expected` names (recursively), the rest equal. */
export function matches(actual: unknown, expected: unknown): boolean {
  if (expected instanceof RegExp) return typeof actual === 'string' && expected.test(actual);
  if (typeof expected === 'object' && expected !== null && !Array.isArray(expected)) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) => matches((actual as Record<string, unknown>)[key], value));
  }
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((value, index) => matches(actual[index], value));
  return isDeepStrictEqual(actual, expected);
}

const show = (value: unknown) => JSON.stringify(value, (_key, inner: unknown) => (inner instanceof RegExp ? String(inner) : inner));

export class TurnExpectation {
  constructor(readonly result: AgentTurnResult) {}

  private fail(message: string): never {
    throw new TurnExpectationError(message);
  }

  private records(toolName: string): ToolCallRecord[] {
    return this.result.toolCalls.filter((record) => record.toolName === toolName);
  }

  private calls(): string {
    return this.result.toolCalls.map((record) => `${record.toolName} ${show(record.input)} -> ${record.outcome}`).join('; ') || 'no tool calls';
  }

  toHaveStatus(status: EndedTurnStatus): this {
    if (this.result.status !== status) this.fail(`expected the turn to end ${status}; it ended ${this.result.status} (${this.calls()}; text ${show(this.result.text)})`);
    return this;
  }

  /** A call of `toolName` (whose input holds `input`, when given). */
  toHaveCalled(toolName: string, input?: unknown): this {
    if (!this.records(toolName).some((record) => input === undefined || matches(record.input, input))) {
      this.fail(`expected a call of ${toolName}${input === undefined ? '' : ` with ${show(input)}`}; the turn made ${this.calls()}`);
    }
    return this;
  }

  toHaveCallCount(toolName: string, count: number): this {
    const made = this.records(toolName).length;
    if (made !== count) this.fail(`expected ${count} calls of ${toolName}; the turn made ${made} (${this.calls()})`);
    return this;
  }

  /** No call of `toolName`. */
  notToHaveCalled(toolName: string): this {
    return this.toHaveCallCount(toolName, 0);
  }

  /** The record of `toolName`'s call (the `nth`, 1-based, default the first) holds `expected`. */
  toHaveRecord(toolName: string, expected: Partial<Record<keyof ToolCallRecord, unknown>>, options: { nth?: number } = {}): this {
    const record = this.records(toolName)[(options.nth ?? 1) - 1];
    if (!record) this.fail(`expected call ${options.nth ?? 1} of ${toolName}; the turn made ${this.calls()}`);
    if (!matches(record, expected)) this.fail(`expected ${toolName}'s record to hold ${show(expected)}; it is ${show(record)}`);
    return this;
  }

  /** `executed` (ran without approval), `approved`, `denied`, `expired`, `client`, `error`, `cancelled`. */
  toHaveOutcome(toolName: string, outcome: ToolCallOutcome, options: { nth?: number } = {}): this {
    return this.toHaveRecord(toolName, { outcome }, options);
  }

  /** A decision on `toolName`'s call holding `expected` (`outcome`, `automatic`, `approver`, `reason`, …). */
  toHaveDecision(toolName: string, expected: Partial<Record<keyof DecisionRecord, unknown>>): this {
    const decisions = (this.result.decisions ?? []).filter((decision) => decision.toolName === toolName);
    if (!decisions.some((decision) => matches(decision, expected))) {
      this.fail(`expected a decision on ${toolName} holding ${show(expected)}; the turn's decisions on it: ${show(decisions)}`);
    }
    return this;
  }

  /** The model was sent a result of `toolName` holding `expected` (`output`, `isError`). */
  toHaveSentModel(toolName: string, expected: Partial<Record<keyof ToolResultPart, unknown>>): this {
    const sent = this.toolResults().filter((part) => part.toolName === toolName);
    if (!sent.some((part) => matches(part, expected))) this.fail(`expected the model to be sent a result of ${toolName} holding ${show(expected)}; it was sent ${show(sent)}`);
    return this;
  }

  /** Every tool call of the turn has exactly one result sent to the model and exactly one record. */
  toHaveOneResultPerCall(): this {
    const calls = this.result.messages.flatMap((message) => (message.role === 'assistant' ? message.content.filter((part) => part.type === 'tool-call') : []));
    const results = this.toolResults();
    for (const call of calls) {
      const sent = results.filter((part) => part.toolCallId === call.toolCallId).length;
      const recorded = this.result.toolCalls.filter((record) => record.toolCallId === call.toolCallId).length;
      if (sent !== 1 || recorded !== 1) this.fail(`expected one result and one record for ${call.toolName} (${call.toolCallId}); it has ${sent} results and ${recorded} records`);
    }
    const stray = results.filter((part) => !calls.some((call) => call.toolCallId === part.toolCallId));
    if (stray.length > 0) this.fail(`results for calls the model did not make: ${show(stray)}`);
    return this;
  }

  /** The turn's final text contains `expected` (or matches it). */
  toHaveText(expected: string | RegExp): this {
    const ok = typeof expected === 'string' ? this.result.text.includes(expected) : expected.test(this.result.text);
    if (!ok) this.fail(`expected the turn's text to ${typeof expected === 'string' ? 'contain' : 'match'} ${show(expected)}; it is ${show(this.result.text)}`);
    return this;
  }

  private toolResults(): ToolResultPart[] {
    return this.result.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
  }
}

export function expectTurn(result: AgentTurnResult): TurnExpectation {
  return new TurnExpectation(result);
}
