/** Server-Sent Events responses, as every streaming route of the API opens them. */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Takes the response over from fastify and sends the headers of an event stream: no caching or
 * transforming on the way (`no-transform`, and `x-accel-buffering: no` for nginx, which would
 * otherwise hold events back in its buffer). Returns the raw response to write events to.
 */
export function openEventStream(reply: FastifyReply, headers: Record<string, string> = {}): ServerResponse {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...headers,
  });
  return response;
}
