/**
 * `scripted`: turnpike's offline DEMO model. It is not an LLM and not a test double: it reads
 * the conversation with a few fixed rules, so `npm start` and the tests run without an API
 * key and give the same answer every time.
 *
 * It understands, in the latest user message:
 *   - `look up order 1001`                 -> lookup_order { orderId: "1001" }
 *   - `refund $250 on order 1001`          -> issue_refund { orderId: "1001", amount: 250 }
 *   - `ask me "which colour?"`             -> ask_user { question: "which colour?" }
 *   - `use <tool> with {json}`             -> any tool, with that input (kept raw if it is not JSON)
 * Requests joined by `and` (or `;`) are called in parallel in one step; `then` starts the next
 * step. When every step has run, it answers with a summary of the tool results; a turn that asks
 * for a typed answer (`output`) gets, instead, the JSON of the latest user message's
 * `answer with {json}`, as written (the turn checks it against the schema).
 *
 * A model name registered by a test's `script(...)` (`script:<id>`, see ./script.ts) answers
 * with that script's steps instead.
 */
import { isScriptModel, scriptStep } from './script.js';
import type { ModelStreamListener } from './stream-delta.js';
import type { AssistantMessage, Message, ModelStepInput, ModelStepResult, TextPart, ToolCallPart, ToolResultPart } from '../../workflows/types/index.js';

export interface ScriptedToolCall {
  toolName: string;
  input: unknown;
}

function messageText(message: Message): string {
  if (message.role === 'tool') return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content as Array<{ type: string }>)
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/** Reads the JSON object that starts at `text[start]`, by brace matching outside strings. */
function readJsonObject(text: string, start: number): { raw: string; end: number } {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return { raw: text.slice(start, i + 1), end: i + 1 };
  }
  return { raw: text.slice(start), end: text.length };
}

const PATTERNS: Array<{ regex: RegExp; toCall: (match: RegExpExecArray, text: string) => { call: ScriptedToolCall; end: number } }> = [
  {
    regex: /\buse ([A-Za-z0-9_-]+) with (?=\{)/iy,
    toCall(match, text) {
      const { raw, end } = readJsonObject(text, match.index + match[0].length);
      let input: unknown = raw;
      try {
        input = JSON.parse(raw);
      } catch {
        // Kept as raw text, as a real provider does with malformed arguments.
      }
      return { call: { toolName: match[1], input }, end };
    },
  },
  {
    regex: /\blook up order #?([A-Za-z0-9-]+)/iy,
    toCall: (match) => ({ call: { toolName: 'lookup_order', input: { orderId: match[1] } }, end: match.index + match[0].length }),
  },
  {
    regex: /\brefund \$?(-?\d+(?:\.\d+)?) (?:on|for) order #?([A-Za-z0-9-]+)/iy,
    toCall: (match) => ({
      call: { toolName: 'issue_refund', input: { orderId: match[2], amount: Number(match[1]) } },
      end: match.index + match[0].length,
    }),
  },
  {
    regex: /\bask me (?:"([^"]*)"|([^;]*?\?))/iy,
    toCall: (match) => ({ call: { toolName: 'ask_user', input: { question: match[1] ?? match[2] } }, end: match.index + match[0].length }),
  },
];

/**
 * Parses a user message into steps of tool calls. Exported for unit tests and for the
 * README's examples; the activity below is the only runtime user.
 */
export function parseScriptedRequests(text: string): ScriptedToolCall[][] {
  const steps: ScriptedToolCall[][] = [[]];
  let position = 0;
  while (position < text.length) {
    if (/^\s*\bthen\b/i.test(text.slice(position, position + 12)) && steps.at(-1)!.length > 0) {
      steps.push([]);
      position = text.indexOf('then', position) + 4;
      continue;
    }
    let matched = false;
    for (const pattern of PATTERNS) {
      pattern.regex.lastIndex = position;
      const match = pattern.regex.exec(text);
      if (match) {
        const { call, end } = pattern.toCall(match, text);
        steps.at(-1)!.push(call);
        position = end;
        matched = true;
        break;
      }
    }
    if (!matched) position++;
  }
  return steps.filter((step) => step.length > 0);
}

/**
 * The `{json}` of the latest user message that says `answer with {json}`, as written: a typed
 * answer's corrections are user messages too, so the request may be a few messages back.
 */
function typedAnswer(messages: Message[]): string | undefined {
  for (const message of [...messages].reverse()) {
    if (message.role !== 'user') continue;
    const text = messageText(message);
    const match = /\banswer with (?=\{)/i.exec(text);
    if (match) return readJsonObject(text, match.index + match[0].length).raw;
  }
  return undefined;
}

function summarize(result: ToolResultPart): string {
  const output = typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
  return `${result.toolName}: ${result.isError ? 'failed — ' : ''}${output}`;
}

/** A rough token estimate (4 characters a token); the scripted model has no tokenizer. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Streams what the step says the way a provider would: each call's input as one piece, the
 * text word by word.
 */
function streamStep(content: Array<TextPart | ToolCallPart>, onDelta: ModelStreamListener): void {
  for (const part of content) {
    if (part.type === 'tool-call') {
      onDelta({ type: 'tool-input-start', toolCallId: part.toolCallId, toolName: part.toolName });
      onDelta({ type: 'tool-input-delta', toolCallId: part.toolCallId, inputTextDelta: JSON.stringify(part.input) });
    } else {
      for (const word of part.text.match(/\S+\s*|\s+/g) ?? []) onDelta({ type: 'text-delta', text: word });
    }
  }
}

export function scriptedModelStep(input: ModelStepInput, onDelta?: ModelStreamListener): ModelStepResult {
  // A test's script (turnpike/testing), by the model name it was registered under.
  if (isScriptModel(input.model.model)) {
    const scripted = scriptStep(input);
    if (onDelta) streamStep(scripted.message.content as Array<TextPart | ToolCallPart>, onDelta);
    return scripted;
  }
  const lastUser = input.messages.findLastIndex((message) => message.role === 'user');
  const request = lastUser >= 0 ? messageText(input.messages[lastUser]) : '';
  const since = input.messages.slice(lastUser + 1);
  const stepsTaken = since.filter((message) => message.role === 'assistant').length;
  const steps = parseScriptedRequests(request);
  const usage = { inputTokens: estimateTokens(JSON.stringify(input.messages)), outputTokens: 0 };

  if (stepsTaken < steps.length) {
    // Ids unique across the conversation, as both real APIs require.
    const assistantSoFar = input.messages.filter((message) => message.role === 'assistant').length;
    const content: ToolCallPart[] = steps[stepsTaken].map((call, index) => ({
      type: 'tool-call',
      toolCallId: `call_${assistantSoFar + 1}_${index + 1}`,
      toolName: call.toolName,
      input: call.input,
    }));
    usage.outputTokens = estimateTokens(JSON.stringify(content));
    if (onDelta) streamStep(content, onDelta);
    return { message: { role: 'assistant', content }, finishReason: 'tool-calls', usage };
  }

  const results = since.flatMap((message) => (message.role === 'tool' ? message.content : []));
  const typed = input.output ? typedAnswer(input.messages) : undefined;
  const text =
    typed !== undefined
      ? typed
      : results.length > 0
      ? `Done. ${results.map(summarize).join('; ')}`
      : `(scripted demo model) You said: "${request.slice(0, 200)}". Try: "look up order 1001 then refund $250 on order 1001".`;
  usage.outputTokens = estimateTokens(text);
  const message: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text }] };
  if (onDelta) streamStep(message.content as TextPart[], onDelta);
  return { message, finishReason: 'stop', usage };
}
