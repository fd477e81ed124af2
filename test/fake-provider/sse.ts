/**
 * Writes a streamed reply as Server-Sent Events, the way the real APIs do, with the controls a
 * test needs: pause after some events until the test lets the stream go on (to observe a delta
 * before the step completes, with no timing), or drop the connection part-way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How a scripted streamed reply is delivered; events are counted in the order they are sent, pings included. */
export interface ScriptedStreamControl {
  /** After this many events, wait until `resume` settles before sending the rest. */
  pauseAfterEvents?: number;
  resume?: Promise<unknown>;
  /** After this many events, destroy the connection without finishing the response. */
  dropAfterEvents?: number;
  /**
   * After this many events, send the provider's mid-stream error and end the response: Anthropic
   * an `event: error` with `overloaded_error`, Chat Completions a `data: {"error": …}` chunk, the
   * Responses API an `event: error` with `server_error`.
   */
  errorAfterEvents?: number;
  /** After this many events, end the response cleanly though the reply is unfinished, as a proxy that gives up does. */
  endAfterEvents?: number;
  /** Send half the events, then one whose JSON is cut in half, then end: what a broken proxy sends. */
  truncate?: boolean;
  /** Wait this long between events, as a model writes tokens at its own pace (the benchmark's streaming figure). */
  eventIntervalMs?: number;
  /** Called as each event has been written to the socket (the benchmark timestamps tokens leaving the provider). */
  onEvent?: (frame: SSEFrame) => void;
}

/** How a streamed reply ended: all of it, or cut short as `ScriptedStreamControl` asked. */
export type StreamEnd = 'complete' | 'dropped' | 'error' | 'ended' | 'truncated' | 'client-closed';

/** One SSE frame: `event:` (Anthropic names every event; OpenAI names none) and the JSON or raw data. */
export interface SSEFrame {
  event?: string;
  data: unknown;
}

export function formatFrame(frame: SSEFrame, cutJson = false): string {
  let data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
  if (cutJson) data = data.slice(0, Math.floor(data.length / 2));
  return `${frame.event !== undefined ? `event: ${frame.event}\n` : ''}data: ${data}\n\n`;
}

/**
 * Sends `frames` as `text/event-stream`, honouring `control`. `until` settles when the server
 * closes, so a paused stream never holds `close()` up.
 */
export async function writeEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  frames: SSEFrame[],
  options: { headers: Record<string, string>; control?: ScriptedStreamControl; errorFrame: SSEFrame; closing: Promise<void> },
): Promise<StreamEnd> {
  const { control = {}, closing } = options;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', ...options.headers });
  const cutAt = control.truncate ? Math.floor(frames.length / 2) : undefined;
  for (let index = 0; index <= frames.length; index++) {
    if (index === control.pauseAfterEvents && control.resume) await Promise.race([control.resume, closing]);
    // The client went away (a cancelled call): nothing more to send.
    if (raw.destroyed) return 'client-closed';
    if (index === control.dropAfterEvents) {
      request.raw.socket.destroy();
      return 'dropped';
    }
    if (index === control.errorAfterEvents) {
      raw.end(formatFrame(options.errorFrame));
      return 'error';
    }
    if (index === control.endAfterEvents) {
      raw.end();
      return 'ended';
    }
    if (index === cutAt) {
      raw.end(formatFrame(frames[index]!, true));
      return 'truncated';
    }
    if (index === frames.length) break;
    raw.write(formatFrame(frames[index]!));
    control.onEvent?.(frames[index]!);
    // Let each event leave as its own write, as a model's tokens do, rather than in one burst.
    if (control.eventIntervalMs) await new Promise((resolve) => setTimeout(resolve, control.eventIntervalMs));
    else await new Promise((resolve) => setImmediate(resolve));
  }
  raw.end();
  return 'complete';
}

/** Splits text the way a model streams it: a word (with the space after it) at a time. */
export function textPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Splits tool-call arguments into short pieces, as both APIs stream partial JSON. */
export function jsonPieces(json: string, size = 8): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < json.length; start += size) pieces.push(json.slice(start, start + size));
  return pieces;
}
