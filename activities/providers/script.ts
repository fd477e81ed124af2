/**
 * Scripts for the `scripted` provider: a model whose steps are plain data, for tests of a user's
 * own tools and policies (`turnpike/testing`: `script([[call('issue_refund', { amount: 250 })],
 * text('Refunded.')])`). A script is kept in the worker's process under a model name
 * (`script:<id>`), and a turn names it as it names any model: `{ provider: 'scripted', model }`.
 *
 * Step N of the script answers the turn's Nth model call since the latest user message. Before it
 * answers, it holds the transcript to what the real APIs refuse (as turnpike's fake providers do):
 * every tool call answered by exactly one result of the same id and name, right after the
 * assistant message that made it; call ids unique; only offered tools called. A transcript that
 * breaks one, or a turn that asks for more steps than the script has, fails the model call
 * (non-retryable `ScriptViolation`), so the turn fails and the test sees why.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Message, ModelStepInput, ModelStepResult, TextPart, ToolCallPart } from '../../workflows/types/index.js';

/** One part of a scripted step: a tool call or text. */
export type ScriptPart = { type: 'tool-call'; toolName: string; input: unknown; toolCallId?: string } | { type: 'text'; text: string };

/** A step: one part, or several said together (parallel tool calls, text beside them). */
export type ScriptStep = ScriptPart | readonly ScriptPart[];

interface ScriptEntry {
  steps: ScriptPart[][];
  /** The transcript each step was asked with, by step index (a retried step's latest). */
  requests: Message[][];
}

const SCRIPT_PREFIX = 'script:';
const scripts = new Map<string, ScriptEntry>();
let counter = 0;

/** Registers a script in this process and returns the model name a turn names it by. */
export function registerScript(steps: readonly ScriptStep[]): string {
  const normalized = steps.map((step) => (Array.isArray(step) ? [...(step as readonly ScriptPart[])] : [step as ScriptPart]));
  for (const [index, step] of normalized.entries()) {
    if (step.length === 0) throw new TypeError(`script: step ${index + 1} is empty`);
    for (const part of step) {
      if (part?.type !== 'tool-call' && part?.type !== 'text') throw new TypeError(`script: step ${index + 1} holds ${JSON.stringify(part)}, not call(...) or text(...)`);
    }
  }
  const name = `${SCRIPT_PREFIX}${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  scripts.set(name, { steps: normalized, requests: [] });
  return name;
}

/** The transcripts a script's steps were asked with, step by step. */
export function scriptRequests(model: string): Message[][] {
  return scripts.get(model)?.requests.map((messages) => [...messages]) ?? [];
}

/** Forgets a script (the test environment forgets its scripts at teardown). */
export function forgetScript(model: string): void {
  scripts.delete(model);
}

export function isScriptModel(model: string): boolean {
  return model.startsWith(SCRIPT_PREFIX);
}

function violation(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`scripted model: ${message}`, 'ScriptViolation');
}

/** What the real APIs refuse: an unanswered, twice-answered, misnamed or stray tool result; a reused id. */
function checkTranscript(messages: Message[]): void {
  const seenIds = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      const previous = messages[index - 1];
      if (previous?.role !== 'assistant' && previous?.role !== 'tool') throw violation(`messages[${index}]: tool results must follow the assistant message whose calls they answer`);
      continue;
    }
    if (message.role !== 'assistant') continue;
    const calls = message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
    if (calls.length === 0) continue;
    const results = [];
    for (let next = index + 1; messages[next]?.role === 'tool'; next++) results.push(...(messages[next]!.content as ToolMessageContent));
    for (const call of calls) {
      if (seenIds.has(call.toolCallId)) throw violation(`messages[${index}]: tool call id ${call.toolCallId} is used twice`);
      seenIds.add(call.toolCallId);
      const answers = results.filter((result) => result.toolCallId === call.toolCallId);
      if (answers.length !== 1) throw violation(`messages[${index}]: tool call ${call.toolCallId} (${call.toolName}) has ${answers.length} results; each call needs exactly one`);
      if (answers[0]!.toolName !== call.toolName) throw violation(`messages[${index}]: the result of ${call.toolCallId} names ${answers[0]!.toolName}, the call ${call.toolName}`);
    }
    const stray = results.filter((result) => !calls.some((call) => call.toolCallId === result.toolCallId));
    if (stray.length > 0) throw violation(`messages[${index + 1}]: results for calls the assistant did not make: ${stray.map((result) => result.toolCallId).join(', ')}`);
  }
}

type ToolMessageContent = Extract<Message, { role: 'tool' }>['content'];

/** One step of a registered script: the assistant message the script says at this point of the turn. */
export function scriptStep(input: ModelStepInput): ModelStepResult {
  const entry = scripts.get(input.model.model);
  if (!entry) throw violation(`no script named ${input.model.model} in this worker's process (scripts live in the process of the test that made them)`);
  checkTranscript(input.messages);
  const lastUser = input.messages.findLastIndex((message) => message.role === 'user');
  const stepIndex = input.messages.slice(lastUser + 1).filter((message) => message.role === 'assistant').length;
  entry.requests[stepIndex] = input.messages;
  const step = entry.steps[stepIndex];
  if (!step) throw violation(`the turn asked for step ${stepIndex + 1} and the script has ${entry.steps.length}`);
  const offered = new Set(input.tools.map((tool) => tool.name));
  const assistantSoFar = input.messages.filter((message) => message.role === 'assistant').length;
  const usedIds = new Set(input.messages.flatMap((message) => (message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [])));
  const content: Array<TextPart | ToolCallPart> = step.map((part, index) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (!offered.has(part.toolName)) throw violation(`step ${stepIndex + 1} calls ${part.toolName}, which the turn does not offer (offered: ${[...offered].join(', ') || 'none'})`);
    // Ids unique across the conversation, as the real APIs require.
    const toolCallId = part.toolCallId ?? `call_${assistantSoFar + 1}_${index + 1}`;
    if (usedIds.has(toolCallId)) throw violation(`step ${stepIndex + 1} calls ${part.toolName} with id ${toolCallId}, which an earlier call used`);
    usedIds.add(toolCallId);
    return { type: 'tool-call', toolCallId, toolName: part.toolName, input: part.input };
  });
  const calls = content.filter((part) => part.type === 'tool-call').length;
  const tokens = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4);
  return {
    message: { role: 'assistant', content },
    finishReason: calls > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: tokens(input.messages), outputTokens: tokens(content) },
  };
}
