/**
 * Server-Sent Events read from a real HTTP response, as a browser's EventSource reads them:
 * `event:`, `id:` and `data:` fields, messages separated by a blank line.
 */
import { expect } from 'vitest';

export interface SseMessage {
  event: string;
  id?: string;
  data: string;
}

/** Reads SSE messages from a real HTTP response until `until` holds for one (inclusive), then disconnects; a GET unless `init` says otherwise. */
export async function readSseFrom(
  url: string,
  headers: Record<string, string>,
  until: (message: SseMessage) => boolean,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; messages: SseMessage[] }> {
  const abort = new AbortController();
  const response = await fetch(url, { ...init, headers, signal: abort.signal });
  if (response.status !== 200) return { status: response.status, messages: [] };
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const messages: SseMessage[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message: SseMessage = { event: 'message', data: '' };
        let hasData = false;
        for (const line of block.split('\n')) {
          const [field, ...rest] = line.split(':');
          const value = rest.join(':').replace(/^ /, '');
          if (field === 'event') message.event = value;
          else if (field === 'id') message.id = value;
          else if (field === 'data') {
            message.data += value;
            hasData = true;
          }
        }
        if (!hasData) continue;
        messages.push(message);
        if (until(message)) return { status: 200, messages };
      }
    }
  } finally {
    abort.abort();
  }
  return { status: 200, messages };
}
