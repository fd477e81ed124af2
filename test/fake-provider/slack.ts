/**
 * A strict fake of Slack's Web API for `@slack/web-api`'s `WebClient` (point it here with
 * `slackApiUrl`): `chat.postMessage`, `chat.update`, `users.info` and `views.open`. It checks the
 * bearer token and the required arguments and answers `ok: false` with Slack's own error strings
 * (`not_authed`, `invalid_auth`, `channel_not_found`, `message_not_found`, `user_not_found`,
 * `invalid_arguments`, `expired_trigger_id`); it records every call it answered.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSlackUser { id: string; email?: string }
export interface FakeSlackCall { method: string; args: Record<string, unknown> }
export interface FakeSlackMessage { channel: string; ts: string; text?: string; blocks?: unknown }
/** A message posted to an interaction's `response_url`. */
export interface FakeSlackResponse { url: string; body: { response_type?: string; replace_original?: boolean; text: string } }

export interface FakeSlack {
  url: string; // ends with `/api/`, as `slackApiUrl` wants
  calls: FakeSlackCall[];
  messages: FakeSlackMessage[];
  /** Answers the next call of `method` with `error`; `ratelimited` as Slack does: HTTP 429 with `Retry-After: 1`. */
  failNext(method: string, error: string): void;
  /** A trigger id `views.open` accepts once; any other is expired. */
  issueTrigger(): string;
  /** Messages posted to response URLs, in order. */
  responses: FakeSlackResponse[];
  /** A `response_url` as Slack puts in an interaction: takes JSON posts (five at most), answers 404 `used_url` after. */
  issueResponseUrl(): string;
  close(): Promise<void>;
}

export async function startFakeSlack(options: { token: string; channels: string[]; users: FakeSlackUser[] }): Promise<FakeSlack> {
  const calls: FakeSlackCall[] = [];
  const messages: FakeSlackMessage[] = [];
  const triggers = new Set<string>();
  const responses: FakeSlackResponse[] = [];
  const responseUrls = new Map<string, number>();
  const failures = new Map<string, string>();
  let counter = 0;
  const handlers: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'chat.postMessage': (args) => {
      if (typeof args.channel !== 'string') return { ok: false, error: 'invalid_arguments' };
      if (!options.channels.includes(args.channel)) return { ok: false, error: 'channel_not_found' };
      if (args.text === undefined && args.blocks === undefined) return { ok: false, error: 'no_text' };
      const message = { channel: args.channel, ts: `1700000000.${String(++counter).padStart(6, '0')}`, text: args.text as string, blocks: args.blocks };
      messages.push(message);
      return { ok: true, channel: message.channel, ts: message.ts, message: { text: message.text, blocks: message.blocks } };
    },
    'chat.update': (args) => {
      if (typeof args.channel !== 'string' || typeof args.ts !== 'string') return { ok: false, error: 'invalid_arguments' };
      if (!options.channels.includes(args.channel)) return { ok: false, error: 'channel_not_found' };
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      message.text = args.text as string;
      message.blocks = args.blocks;
      return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
    },
    'users.info': (args) => {
      if (typeof args.user !== 'string') return { ok: false, error: 'invalid_arguments' };
      const user = options.users.find((u) => u.id === args.user);
      if (!user) return { ok: false, error: 'user_not_found' };
      return { ok: true, user: { id: user.id, profile: user.email ? { email: user.email } : {} } };
    },
    'views.open': (args) => {
      if (typeof args.trigger_id !== 'string' || args.view === undefined) return { ok: false, error: 'invalid_arguments' };
      if (!isModal(args.view)) return { ok: false, error: 'invalid_arguments' };
      if (!triggers.delete(args.trigger_id)) return { ok: false, error: 'expired_trigger_id' };
      return { ok: true, view: { id: `V${++counter}` } };
    },
  };
  const server = createServer(async (request, response) => {
    const reply = (body: Record<string, unknown>) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if ((request.url ?? '').startsWith('/response/')) return respond(request, await readBody(request), response);
    const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0];
    const args = parseArgs(request, await readBody(request));
    const handler = handlers[method];
    if (!handler) return reply({ ok: false, error: 'unknown_method' });
    const auth = request.headers.authorization;
    if (!auth) return reply({ ok: false, error: 'not_authed' });
    if (auth !== `Bearer ${options.token}`) return reply({ ok: false, error: 'invalid_auth' });
    const failure = failures.get(method);
    if (failure !== undefined) {
      failures.delete(method);
      if (failure === 'ratelimited') {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        return response.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
      }
      return reply({ ok: false, error: failure });
    }
    const result = handler(args);
    if (result.ok) calls.push({ method, args });
    reply(result);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Slack's response URLs: JSON with `text`, an ephemeral or in-channel `response_type`; five posts each.
  function respond(request: IncomingMessage, body: string, response: import('node:http').ServerResponse) {
    const used = responseUrls.get(request.url!);
    const answer = (status: number, text: string) => response.writeHead(status, { 'content-type': 'text/plain' }).end(text);
    if (used === undefined) return answer(404, 'no_such_url');
    if (used >= 5) return answer(404, 'used_url');
    if (request.method !== 'POST' || !(request.headers['content-type'] ?? '').startsWith('application/json')) return answer(400, 'invalid_payload');
    let parsed: FakeSlackResponse['body'];
    try {
      parsed = JSON.parse(body) as FakeSlackResponse['body'];
    } catch {
      return answer(400, 'invalid_payload');
    }
    if (typeof parsed.text !== 'string' || !['ephemeral', 'in_channel', undefined].includes(parsed.response_type)) return answer(400, 'invalid_payload');
    responseUrls.set(request.url!, used + 1);
    responses.push({ url: `http://127.0.0.1:${port}${request.url}`, body: parsed });
    return answer(200, 'ok');
  }
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    messages,
    failNext(method, error) {
      failures.set(method, error);
    },
    issueTrigger() {
      const id = `${++counter}.47445629121.${Math.random().toString(16).slice(2)}`;
      triggers.add(id);
      return id;
    },
    responses,
    issueResponseUrl() {
      const path = `/response/T0001/${++counter}/${Math.random().toString(16).slice(2)}`;
      responseUrls.set(path, 0);
      return `http://127.0.0.1:${port}${path}`;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A modal `views.open` accepts: a callback id, a title of at most 24 characters, blocks, private metadata of at most 3,000. */
function isModal(view: unknown): boolean {
  const modal = view as { type?: unknown; title?: { text?: unknown }; blocks?: unknown; private_metadata?: unknown };
  return (
    modal?.type === 'modal' &&
    typeof modal.title?.text === 'string' && modal.title.text.length <= 24 &&
    Array.isArray(modal.blocks) && modal.blocks.length <= 100 &&
    (modal.private_metadata === undefined || (typeof modal.private_metadata === 'string' && modal.private_metadata.length <= 3000))
  );
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

/** `WebClient` sends urlencoded forms with nested values JSON-encoded; some callers send JSON. */
function parseArgs(request: IncomingMessage, body: string): Record<string, unknown> {
  if ((request.headers['content-type'] ?? '').includes('application/json')) return body ? JSON.parse(body) : {};
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    try {
      args[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
    } catch {
      args[key] = value;
    }
  }
  return args;
}
