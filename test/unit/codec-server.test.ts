/**
 * The codec server's HTTP protocol, in-process: the request bodies the Temporal CLI and Web UI
 * send (a `Payloads` message in protobuf JSON, where an empty list is `{}` and empty bytes leave
 * out `data`), what it refuses, CORS for the Web UI's origin, and bearer tokens.
 * test/integration/codec-server.test.ts runs it with the real Temporal CLI.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCodecServer } from '../../api/codec-server.js';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const jsonPayload = (value: unknown) => ({ metadata: { encoding: base64('json/plain') }, data: base64(JSON.stringify(value)) });

let server: FastifyInstance;

beforeAll(async () => {
  server = await buildCodecServer();
});

afterAll(async () => {
  await server.close();
});

async function post(url: string, body: string) {
  const response = await server.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json' } });
  return { status: response.statusCode, body: response.json() as { payloads?: unknown[]; error?: string } };
}

describe('codec server request bodies', () => {
  it.each(['/encode', '/decode', '/default/encode', '/default/decode'])('%s answers an empty list, sent as {} or { payloads: [] }, with an empty list', async (url) => {
    for (const body of ['{}', '{"payloads":[]}', '{"payloads":null}']) {
      await expect(post(url, body)).resolves.toEqual({ status: 200, body: { payloads: [] } });
    }
  });

  it('ignores fields it does not know', async () => {
    const payload = jsonPayload({ hello: 'world' });
    const response = await post('/decode', JSON.stringify({ payloads: [payload], extra: true, _protoMessageType: 'temporal.api.common.v1.Payloads' }));
    expect(response).toEqual({ status: 200, body: { payloads: [payload] } });
  });

  it('encodes a payload over 4 KiB to binary/gzip and decodes it back', async () => {
    const large = jsonPayload({ text: 'x'.repeat(10_000) });
    const encoded = await post('/encode', JSON.stringify({ payloads: [large] }));
    expect(encoded.status).toBe(200);
    const [compressed] = encoded.body.payloads as Array<{ metadata: { encoding: string }; data: string }>;
    expect(Buffer.from(compressed.metadata.encoding, 'base64').toString()).toBe('binary/gzip');
    expect(compressed.data.length).toBeLessThan(large.data.length / 10);
    await expect(post('/decode', JSON.stringify(encoded.body))).resolves.toEqual({ status: 200, body: { payloads: [large] } });
  });

  it('reads a payload without data as empty bytes: protobuf JSON leaves it out for binary/null', async () => {
    // What the Temporal CLI sends for an activity that returned nothing (see the integration test).
    const empty = { metadata: { encoding: base64('binary/null') } };
    await expect(post('/decode', JSON.stringify({ payloads: [empty] }))).resolves.toEqual({ status: 200, body: { payloads: [{ ...empty, data: '' }] } });
  });

  it.each([
    ['payloads that is not a list', '{"payloads":{}}', 'payloads: expected payloads to be a list'],
    ['payloads that is a string', '{"payloads":"abc"}', 'payloads: expected payloads to be a list'],
    ['a payload that is not an object', '{"payloads":["abc"]}', 'payloads.0: expected a payload'],
    ['data that is not base64', '{"payloads":[{"data":"not base64!"}]}', 'payloads.0.data: expected a base64 string'],
    ['data that is not a string', '{"payloads":[{"data":12}]}', 'payloads.0.data: expected a base64 string'],
    ['a metadata value that is not a string', '{"payloads":[{"metadata":{"encoding":1},"data":""}]}', 'payloads.0.metadata.encoding: expected a base64 string'],
    ['a list instead of an object', '[]', 'expected a JSON object'],
  ])('refuses %s with 400 and says what is wrong', async (_case, body, message) => {
    for (const url of ['/encode', '/decode']) {
      const response = await post(url, body);
      expect(response.status).toBe(400);
      expect(response.body.error).toContain(message);
    }
  });
});

describe('codec server access', () => {
  it('answers the Web UI\'s preflight for allowed origins only, and asks for a token when tokens are set', async () => {
    const guarded = await buildCodecServer({ allowOrigins: ['http://localhost:8233'], tokens: new Map([['s3cret', 'ops']]) });
    try {
      const preflight = await guarded.inject({ method: 'OPTIONS', url: '/default/decode', headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:8233');
      expect(preflight.headers['access-control-allow-headers']).toContain('x-namespace');
      const foreign = await guarded.inject({ method: 'OPTIONS', url: '/decode', headers: { origin: 'http://evil.example' } });
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();

      const body = { payloads: [jsonPayload('x')] };
      expect((await guarded.inject({ method: 'POST', url: '/decode', payload: body })).statusCode).toBe(401);
      const decoded = await guarded.inject({ method: 'POST', url: '/decode', payload: body, headers: { authorization: 'Bearer s3cret' } });
      expect(decoded.statusCode).toBe(200);
      expect(decoded.json()).toEqual(body);
      const empty = await guarded.inject({ method: 'POST', url: '/encode', payload: {}, headers: { authorization: 'Bearer s3cret' } });
      expect(empty.statusCode).toBe(200);
      expect(empty.json()).toEqual({ payloads: [] });
    } finally {
      await guarded.close();
    }
  });
});
