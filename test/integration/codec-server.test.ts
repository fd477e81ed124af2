/**
 * `npx turnpike codec-server`: the Temporal CLI reads a turn's gzip-compressed 100 KB input as
 * JSON through it, and reads only compressed bytes without it. CORS and bearer tokens on the
 * same server, in-process.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildCodecServer } from '../../api/index.js';
import { freePort } from '../../scripts/dev-server.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const BIN = fileURLToPath(new URL('../../bin/turnpike.js', import.meta.url));
const MARKER = 'codec-server-marker';
const LONG_TEXT = `${MARKER} ${Array.from({ length: 21_000 }, (_, index) => `w${index % 997}`).join(' ')}`;

let turnpike: TurnpikeHarness;
let codecServer: ChildProcess;
let endpoint: string;
let turnId: string;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  const handle = await turnpike.startTurn({ text: LONG_TEXT });
  await handle.result();
  turnId = handle.workflowId;

  const port = await freePort();
  codecServer = spawn(process.execPath, [BIN, 'codec-server', '--port', String(port), '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  endpoint = await new Promise<string>((resolve, reject) => {
    let output = '';
    codecServer.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /"codecEndpoint":\s*"([^"]+)"/.exec(output);
      if (listening) resolve(listening[1]);
    });
    codecServer.once('exit', (code) => reject(new Error(`codec-server exited with ${code}`)));
  });
});

afterAll(async () => {
  codecServer?.kill('SIGTERM');
  await turnpike?.stop();
});

/** The turn's input as `temporal workflow show -o json` prints it: [encoding, decoded data]. */
async function startedInput(extraArguments: string[]): Promise<{ encoding: string; data: string }> {
  const { stdout } = await promisify(execFile)(
    inject('temporalCli'),
    ['workflow', 'show', '--workflow-id', turnId, '--address', inject('temporalAddress'), '-o', 'json', ...extraArguments],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const [started] = (JSON.parse(stdout) as { events: Array<{ workflowExecutionStartedEventAttributes?: { input: { payloads: Array<{ metadata: { encoding: string }; data: string }> } } }> }).events;
  const [payload] = started.workflowExecutionStartedEventAttributes!.input.payloads;
  return { encoding: Buffer.from(payload.metadata.encoding, 'base64').toString(), data: Buffer.from(payload.data, 'base64').toString() };
}

describe('the codec server', () => {
  it('lets `temporal workflow show --codec-endpoint` print a compressed 100 KB turn input as JSON', async () => {
    expect(LONG_TEXT.length).toBeGreaterThan(100_000);
    const raw = await startedInput([]);
    expect(raw.encoding).toBe('binary/gzip');
    expect(raw.data).not.toContain(MARKER);

    const decoded = await startedInput(['--codec-endpoint', endpoint]);
    expect(decoded.encoding).toBe('json/plain');
    expect(JSON.parse(decoded.data)).toMatchObject({ messages: [{ role: 'user', content: LONG_TEXT }] });
  });

  it('answers the Web UI\'s preflight for allowed origins only, and asks for a token when tokens are set', async () => {
    const server = await buildCodecServer({ allowOrigins: ['http://localhost:8233'], tokens: new Map([['s3cret', 'ops']]) });
    try {
      const preflight = await server.inject({ method: 'OPTIONS', url: '/default/decode', headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:8233');
      expect(preflight.headers['access-control-allow-headers']).toContain('x-namespace');
      const foreign = await server.inject({ method: 'OPTIONS', url: '/decode', headers: { origin: 'http://evil.example' } });
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();

      const body = { payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"x"').toString('base64') }] };
      expect((await server.inject({ method: 'POST', url: '/decode', payload: body })).statusCode).toBe(401);
      const decoded = await server.inject({ method: 'POST', url: '/decode', payload: body, headers: { authorization: 'Bearer s3cret' } });
      expect(decoded.statusCode).toBe(200);
      expect(decoded.json()).toEqual(body);
      const malformed = await server.inject({ method: 'POST', url: '/encode', payload: { nope: true }, headers: { authorization: 'Bearer s3cret' } });
      expect(malformed.statusCode).toBe(400);
    } finally {
      await server.close();
    }
  });
});
