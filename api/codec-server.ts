/**
 * A codec server for turnpike's payloads: Temporal's codec-server HTTP protocol, so the
 * Temporal CLI (`temporal workflow show --codec-endpoint http://127.0.0.1:8888`) and the Web UI
 * (Settings → Codec Server) show gzip-compressed turn inputs and results as JSON, and payloads kept
 * in the content store (the claim check) as their content.
 *
 *   POST /decode  (also /{namespace}/decode)   { payloads: [{ metadata: { k: base64 }, data: base64 }] }
 *   POST /encode  (also /{namespace}/encode)   the same shape, encoded
 *
 * Bodies are `Payloads` messages in protobuf JSON, as the CLI and the Web UI send them: `{}` is
 * an empty list (the CLI's arguments of a query that takes none), a payload without `data` has
 * empty data. Anything else malformed gets 400 saying where.
 *
 * It decodes whatever it is sent, so it runs on loopback by default; with `tokens`, every
 * request must carry `Authorization: Bearer <token>` (the Web UI can forward the user's token).
 * Browsers reach it from the Web UI's origin only when that origin is listed in `allowOrigins`.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import Fastify, { type FastifyInstance } from 'fastify';
import { z } from 'zod';
import { turnpikeCodecs } from '../content/data-converter.js';
import type { ContentStore } from '../content/content-store.js';
import { identify } from './auth.js';

export interface CodecServerOptions {
  /**
   * The codecs of the workers' data converter, in the same order. Default: turnpike's own
   * (compression, then the claim check over `contentStore`), so claimed payloads show as their
   * content.
   */
  codecs?: PayloadCodec[];
  /** The workers' content store, for the default codecs. Default: the one `TURNPIKE_CONTENT_STORE` names. */
  contentStore?: ContentStore;
  /** Origins allowed to call from a browser, e.g. the Web UI's `http://localhost:8233`. Default: none. */
  allowOrigins?: string[];
  /** When set, requests need `Authorization: Bearer <token>` with one of these tokens. */
  tokens?: Map<string, string>;
  logger?: boolean;
}

/**
 * A `Payloads` message in protobuf JSON, as the Temporal CLI and Web UI send it. Protobuf JSON
 * leaves out fields at their default: an empty list is `{}` (every query without arguments),
 * and empty bytes leave out `data` (the SDKs' `binary/null` payload, e.g. an activity that
 * returns nothing). Bytes fields (data and every metadata value) are base64. Fields this server
 * does not know are ignored.
 */
const base64 = z.string('expected a base64 string').regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'expected a base64 string');
const jsonPayload = z.object(
  { metadata: z.record(z.string(), base64, 'expected metadata: { key: base64 }').nullish(), data: base64.nullish() },
  'expected a payload: { metadata, data }',
);
const jsonPayloads = z.object({ payloads: z.array(jsonPayload, 'expected payloads to be a list').nullish() }, 'expected a JSON object');
type JsonPayloads = z.infer<typeof jsonPayloads>;

/** The first problem in a request body, with where it is: `payloads.0.data: expected a base64 string`. */
function problem(error: z.ZodError): string {
  const [issue] = error.issues;
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return `${where}${issue?.message ?? 'invalid'}`;
}

function fromJson({ payloads }: JsonPayloads): Payload[] {
  return (payloads ?? []).map(({ metadata, data }) => ({
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(data ?? '', 'base64'),
  }));
}

function toJson(payloads: Payload[]): JsonPayloads {
  return {
    payloads: payloads.map(({ metadata, data }) => ({
      metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value ?? new Uint8Array()).toString('base64')])),
      data: Buffer.from(data ?? new Uint8Array()).toString('base64'),
    })),
  };
}

export async function buildCodecServer(options: CodecServerOptions = {}): Promise<FastifyInstance> {
  const codecs = options.codecs ?? turnpikeCodecs([], options.contentStore ? { contentStore: options.contentStore } : {});
  const allowOrigins = new Set(options.allowOrigins ?? []);
  // A turn's conversation can make a payload of a few MB; Temporal's own limit is 2 MB a payload.
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 64 * 1024 * 1024 });

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin && allowOrigins.has(origin)) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('access-control-allow-methods', 'POST, OPTIONS');
      reply.header('access-control-allow-headers', 'content-type, x-namespace, authorization');
      reply.header('vary', 'origin');
    }
    if (request.method === 'OPTIONS') return reply.code(204).send();
    if (options.tokens && !identify(options.tokens, request.headers.authorization)) {
      return reply.code(401).send({ error: 'Send Authorization: Bearer <token> with a token this codec server knows' });
    }
  });

  const route = (operation: 'encode' | 'decode') => async (request: { body: unknown }, reply: { code(status: number): { send(body: unknown): unknown } }) => {
    const parsed = jsonPayloads.safeParse(request.body);
    if (!parsed.success) return reply.code(400).send({ error: `expected a Payloads message, { payloads: [{ metadata, data }] }: ${problem(parsed.error)}` });
    let payloads = fromJson(parsed.data);
    // Encoding runs the codecs first to last, decoding last to first, as the SDK's data converter does.
    if (operation === 'encode') for (const codec of codecs) payloads = await codec.encode(payloads);
    else for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
    return toJson(payloads);
  };
  for (const operation of ['encode', 'decode'] as const) {
    app.post(`/${operation}`, route(operation));
    app.post(`/:namespace/${operation}`, route(operation));
    app.options(`/${operation}`, async () => undefined);
    app.options(`/:namespace/${operation}`, async () => undefined);
  }
  return app;
}
