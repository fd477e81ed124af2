/**
 * `defineA2aAgentTool` as it is defined (what it refuses, the retry policy its polls run on, its
 * cancel) and
 * what a remote A2A task means for the call (`a2a-task-result.ts`): the answer, the question, the
 * error, and forged or broken tasks refused.
 */
import type { Task } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineA2aAgentTool } from '../../activities/a2a-remote/a2a-agent-tool.js';
import { messageIdOf } from '../../activities/a2a-remote/a2a-remote-call.js';
import { A2A_STATE, checkedTask, MalformedRemoteAnswer, statusText, textOf, verdictOf } from '../../activities/a2a-remote/a2a-task-result.js';
import { defineTool, ToolDefinitionError } from '../../activities/tools.js';
import { createToolRegistry } from '../../activities/tool-registry.js';

function task(state: number, extra: Partial<Task> = {}): Task {
  return { id: 't-1', contextId: 'c-1', status: { state, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: {}, ...extra } as Task;
}

function said(text: string): Task['status'] {
  return { state: 0, timestamp: undefined, message: { messageId: 'm', contextId: '', taskId: 't-1', role: 2, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] } } as Task['status'];
}

describe('defineA2aAgentTool', () => {
  it('is a server tool whose polls are its retries: one attempt per poll interval for the whole timeout', () => {
    const tool = defineA2aAgentTool({ name: 'desk', url: 'https://agents.example.com/desk/', description: 'The desk.', pollInterval: '5s', timeout: '10m' });
    expect(tool.kind).toBe('server');
    expect(tool.activityOptions).toEqual({
      startToCloseTimeout: '30s',
      retry: { maximumAttempts: 130, initialInterval: '5000ms', backoffCoefficient: 1, maximumInterval: '5000ms' },
    });
    expect(tool.inputSchema.safeParse({ message: 'hi' }).success).toBe(true);
    expect(tool.inputSchema.safeParse({ message: '' }).success).toBe(false);
    expect(tool.inputSchema.safeParse({ message: 'blue', taskId: 't-1' }).success).toBe(true);
  });

  it('is cancellable: the turn, cancelled during a call, runs its cancel (a tool without one is not)', () => {
    const tool = defineA2aAgentTool({ name: 'desk', url: 'https://agents.example.com/desk/', description: 'The desk.' });
    expect(typeof tool.cancel).toBe('function');
    const plain = defineTool({ name: 'plain', description: 'Plain.', inputSchema: z.object({}), execute: () => 'ok' });
    const specs = createToolRegistry([tool, plain]).specs();
    expect(specs.map((spec) => [spec.name, spec.cancellable])).toEqual([['desk', true], ['plain', undefined]]);
  });

  it("with inputRequired 'person', takes no taskId from the model", () => {
    const tool = defineA2aAgentTool({ name: 'desk', url: 'https://agents.example.com/desk/', description: 'The desk.', inputRequired: 'person' });
    expect(tool.inputSchema.safeParse({ message: 'hi' }).success).toBe(true);
    expect(tool.inputSchema.safeParse({ message: 'blue', taskId: 't-1' }).data).toEqual({ message: 'blue' });
    expect(z.toJSONSchema(tool.inputSchema).properties).not.toHaveProperty('taskId');
  });

  it('takes its description from the card', () => {
    const tool = defineA2aAgentTool({ name: 'desk', card: { name: 'desk', description: 'From the card.' } });
    expect(tool.description).toBe('From the card.');
  });

  it('refuses what could never call the agent', () => {
    const refusals: Array<[() => unknown, RegExp]> = [
      [() => defineA2aAgentTool({ name: 'x', description: 'x' }), /url or card is required/],
      [() => defineA2aAgentTool({ name: 'x', description: 'x', url: 'http://a', card: { name: 'a' } }), /not both/],
      [() => defineA2aAgentTool({ name: 'x', url: 'ftp://example.com', description: 'x' }), /http\(s\) URL/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com' }), /description is required/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com', description: 'x', pollInterval: '10ms' }), /at least 100ms/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com', description: 'x', pollInterval: 'soon' }), /duration/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com', description: 'x', pollInterval: '10s', timeout: '1s' }), /timeout must be at least pollInterval/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com', description: 'x', inputSchema: z.object({ q: z.string() }) }), /needs prompt/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com', description: 'x', approvers: ['ops'] }), /no approval policy/],
      [() => defineA2aAgentTool({ name: 'x', url: 'http://example.com', description: 'x', inputRequired: 'people' as never }), /inputRequired must be 'model' or 'person'/],
      [() => defineA2aAgentTool({ name: 'bad name', url: 'http://example.com', description: 'x' }), /name must match/],
    ];
    for (const [define, message] of refusals) {
      expect(define).toThrow(ToolDefinitionError);
      expect(define).toThrow(message);
    }
  });

  it('derives one message id per call, showing none of the turn ids', () => {
    expect(messageIdOf('turn-1/call_1')).toBe(messageIdOf('turn-1/call_1'));
    expect(messageIdOf('turn-1/call_1')).not.toBe(messageIdOf('turn-1/call_2'));
    expect(messageIdOf('turn-1/call_1')).toMatch(/^turnpike-[0-9a-f]{32}$/);
  });
});

describe('a remote task, for the call', () => {
  it('completed: the artifacts as text, data parts as JSON, files by where they are', () => {
    const done = task(A2A_STATE.COMPLETED, {
      artifacts: [
        {
          artifactId: 'a',
          name: 'answer',
          description: '',
          metadata: undefined,
          extensions: [],
          parts: [
            { content: { $case: 'text', value: 'Ships Tuesday.' }, metadata: undefined, filename: '', mediaType: 'text/plain' },
            { content: { $case: 'data', value: { eta: 'Tuesday' } }, metadata: undefined, filename: '', mediaType: 'application/json' },
            { content: { $case: 'url', value: 'https://files.example.com/label.pdf' }, metadata: undefined, filename: 'label.pdf', mediaType: 'application/pdf' },
          ],
        },
      ],
    });
    expect(verdictOf(done, 'desk')).toEqual({ kind: 'answer', output: 'Ships Tuesday.\n{"eta":"Tuesday"}\n[file label.pdf, application/pdf: https://files.example.com/label.pdf]' });
    expect(verdictOf(task(A2A_STATE.COMPLETED), 'desk')).toEqual({ kind: 'answer', output: 'The remote agent completed task t-1 with no artifact.' });
  });

  it('input-required: the question, and how the model answers it', () => {
    const verdict = verdictOf(task(A2A_STATE.INPUT_REQUIRED, { status: { ...said('Which colour?')!, state: A2A_STATE.INPUT_REQUIRED } }), 'desk');
    expect(verdict).toEqual({
      kind: 'question',
      output: 'The remote agent needs more input to go on with its task t-1: Which colour?\nTo answer it, call desk again with {"taskId": "t-1", "message": "<the answer>"}.',
    });
  });

  it("input-required for a person: the remote's words, or what to say when it said none", () => {
    expect(statusText(task(A2A_STATE.INPUT_REQUIRED, { status: { ...said('Which colour?')!, state: A2A_STATE.INPUT_REQUIRED } }))).toBe('Which colour?');
    expect(statusText(task(A2A_STATE.INPUT_REQUIRED))).toBe('The remote agent needs more input to go on with its task t-1 (it did not say what).');
  });

  it('failed, rejected, canceled, auth-required: an error with what the remote said', () => {
    expect(verdictOf(task(A2A_STATE.FAILED, { status: { ...said('Closed.')!, state: A2A_STATE.FAILED } }), 'desk')).toEqual({ kind: 'ended', error: "The remote agent's task t-1 ended failed: Closed." });
    expect(verdictOf(task(A2A_STATE.REJECTED), 'desk')).toEqual({ kind: 'ended', error: "The remote agent's task t-1 ended rejected." });
    expect(verdictOf(task(A2A_STATE.CANCELED), 'desk')).toEqual({ kind: 'ended', error: "The remote agent's task t-1 ended canceled." });
    expect(verdictOf(task(A2A_STATE.AUTH_REQUIRED), 'desk').kind).toBe('ended');
    expect(verdictOf(task(A2A_STATE.WORKING), 'desk')).toEqual({ kind: 'working', state: 'working' });
    expect(verdictOf(task(A2A_STATE.SUBMITTED), 'desk')).toEqual({ kind: 'working', state: 'submitted' });
  });

  it('refuses a forged or broken task', () => {
    expect(() => checkedTask(undefined, undefined)).toThrow(MalformedRemoteAnswer);
    expect(() => checkedTask('task', undefined)).toThrow(/no task/);
    expect(() => checkedTask({ ...task(A2A_STATE.WORKING), id: '' }, undefined)).toThrow(/without a valid id/);
    expect(() => checkedTask(task(A2A_STATE.WORKING), 'other')).toThrow(/answered with task "t-1" where task "other" was asked for/);
    expect(() => checkedTask(task(0), undefined)).toThrow(/no known state/);
    expect(() => checkedTask(task(42), undefined)).toThrow(/no known state/);
    expect(() => checkedTask({ ...task(A2A_STATE.COMPLETED), artifacts: 'x' }, undefined)).toThrow(/not a list/);
    expect(checkedTask(task(A2A_STATE.WORKING), 't-1').id).toBe('t-1');
  });

  it('reads parts it does not know as nothing', () => {
    expect(textOf(undefined)).toBe('');
    expect(textOf([{ content: undefined, metadata: undefined, filename: '', mediaType: '' }])).toBe('');
    expect(textOf([{ content: { $case: 'raw', value: Buffer.from('abc') }, metadata: undefined, filename: 'a.bin', mediaType: '' }])).toBe('[file a.bin: 3 bytes, not included]');
  });
});
