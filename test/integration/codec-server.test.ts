/**
 * `npx turnpike codec-server`: the Temporal CLI reads a turn's gzip-compressed 100 KB input as
 * JSON through it, and reads only compressed bytes without it. CORS and bearer tokens on the
 * same server are tested in test/unit/codec-server.test.ts.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
});
