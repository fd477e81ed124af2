/**
 * Realistic, neutral conversations for the payload figure: what a stateless agent library's
 * client would have to send back on every resume. Deterministic (seeded), so every run
 * compares the same bytes.
 *
 * Messages come in exchanges of four: a user request, an assistant tool call, the tool's
 * result, the assistant's answer; a length that is not a multiple of four ends with a
 * user / assistant text pair. Every tool call has its result, so it is valid model input.
 */
import type { Message } from '../workflows/types/index.js';

const WORDS = (
  'the a report schedule meeting summary project budget update review draft team plan week ' +
  'customer order delivery invoice status account document notes list item detail time date ' +
  'please could you check find show compare prepare send share confirm next last current new'
).split(' ');

const TOOLS = [
  { name: 'search_documents', input: (r: () => number) => ({ query: words(r, 4), limit: 5 }) },
  { name: 'get_order', input: (r: () => number) => ({ orderId: String(10_000 + Math.floor(r() * 90_000)) }) },
  { name: 'list_events', input: (r: () => number) => ({ from: '2025-03-01', to: '2025-03-08', calendar: words(r, 1) }) },
];

function generator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

function words(random: () => number, count: number): string {
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
}

function sentence(random: () => number, min: number, max: number): string {
  const text = words(random, min + Math.floor(random() * (max - min + 1)));
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

function toolOutput(random: () => number, toolName: string): unknown {
  const items = Array.from({ length: 2 + Math.floor(random() * 3) }, (_, index) => ({
    id: `${toolName.slice(0, 3)}-${index + 1}`,
    title: words(random, 4),
    snippet: sentence(random, 8, 16),
  }));
  return { ok: true, count: items.length, items };
}

/** A conversation of exactly `count` messages. */
export function buildConversation(count: number, seed = 42): Message[] {
  const random = generator(seed);
  const messages: Message[] = [];
  let exchange = 0;
  while (messages.length + 4 <= count) {
    exchange++;
    const tool = TOOLS[exchange % TOOLS.length];
    const toolCallId = `call_${exchange}_1`;
    messages.push(
      { role: 'user', content: `${sentence(random, 10, 30)} ${sentence(random, 5, 15)}` },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: sentence(random, 5, 12) },
          { type: 'tool-call', toolCallId, toolName: tool.name, input: tool.input(random) },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName: tool.name, output: toolOutput(random, tool.name) }] },
      { role: 'assistant', content: [{ type: 'text', text: `${sentence(random, 15, 40)} ${sentence(random, 10, 25)}` }] },
    );
  }
  while (messages.length < count) {
    messages.push(
      messages.length % 2 === 0
        ? { role: 'user', content: sentence(random, 10, 30) }
        : { role: 'assistant', content: [{ type: 'text', text: sentence(random, 15, 40) }] },
    );
  }
  return messages;
}
