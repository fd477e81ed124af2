/**
 * The README's Web UI recipe in a real headless Chromium (Debian's, driven by playwright-core):
 * `npx turnpike codec-server --allow-origin <the UI's origin>`, then the codec server endpoint
 * set in the Web UI's page header. A turn parked on a call over the gzip threshold shows its
 * input, and its `turnState` query result, as JSON instead of `binary/gzip` bytes; a turn whose
 * input is over the claim-check threshold (kept in the content store, `binary/turnpike-claim` in
 * history; without the codec server the UI shows its `sha256:` reference) shows its content,
 * read from the store by the codec server the workers share.
 *
 * The shared dev server runs without its Web UI (`--headless`), so this file starts its own
 * dev server with the UI on a free port, and a worker on it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTurnpikeDataConverter } from '../../content/data-converter.js';
import { claimReference, isClaimed } from '../../content/claim-check-codec.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { freePort, startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { createWorker } from '../../worker/create-worker.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput } from '../../workflows/types/index.js';
import { startCodecServer, type CodecServerProcess } from '../support/codec-server-process.js';
import { testTools, use } from '../support/test-tools.js';
import { waitForState } from '../support/turnpike-harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MARKER = 'web-ui-codec-marker';
/** Over the 4 KiB threshold on its own, so the turn's input and its `turnState` are gzipped. */
const TARGET = `${MARKER} ${Array.from({ length: 1_200 }, (_, index) => `u${index}`).join(' ')}`;
/** `binary/gzip` as the UI prints a payload it cannot decode: its metadata, base64. */
const GZIP_METADATA = Buffer.from('binary/gzip').toString('base64');
const CLAIM_MARKER = 'web-ui-claim-marker';

let devServer: DevServer;
let uiUrl: string;
let connection: Connection;
let nativeConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let codecServer: CodecServerProcess;
let browser: Browser;
let handle: WorkflowHandle<typeof agentTurn>;
let approvalId: string;
let claimed: WorkflowHandle<typeof agentTurn>;
let folder: string;

/** The Web UI comes up a little after the frontend that startDevServer waits for. */
async function waitForUi(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium (bash .ci/run does), or set CHROMIUM_PATH`);
  devServer = await startDevServer({ headless: false, uiPort: await freePort() });
  uiUrl = devServer.uiUrl!;
  await waitForUi(uiUrl);

  // The workers, the client and the codec server share one content store, as they must.
  folder = mkdtempSync(path.join(tmpdir(), 'turnpike-web-ui-content-'));
  const contentStore = new FileContentStore(folder);
  const taskQueue = `web-ui-${randomUUID()}`;
  nativeConnection = await NativeConnection.connect({ address: devServer.address });
  worker = await createWorker({
    tools: testTools,
    contentStore,
    taskQueue,
    connection: nativeConnection,
    namespace: devServer.namespace,
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  running = worker.run();
  connection = await Connection.connect({ address: devServer.address });
  const client = new Client({ connection, namespace: devServer.namespace, dataConverter: createTurnpikeDataConverter({ contentStore }) });
  const input: AgentTurnInput = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('guarded_action', { target: TARGET, count: 3 }) }] };
  handle = await client.workflow.start<typeof agentTurn>('agentTurn', { taskQueue, workflowId: `web-ui-${randomUUID()}`, args: [input] });
  const { pending } = await waitForState(handle, (state) => state.pending.length === 1);
  approvalId = pending[0].approvalId!;
  // ~300 KB of incompressible text: over the claim threshold after gzip, so history holds a
  // reference. On a task queue no worker polls: the UI shows the input from history alone.
  const large = `${CLAIM_MARKER} ${randomBytes(225 * 1024).toString('base64')}`;
  claimed = await client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue: `web-ui-unpolled-${randomUUID()}`,
    workflowId: `web-ui-claimed-${randomUUID()}`,
    args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: large }] }],
  });

  // As the README says: the codec server answers browsers from the Web UI's origin only.
  codecServer = await startCodecServer(['--allow-origin', uiUrl], { TURNPIKE_CONTENT_STORE: folder });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium keeps dialling hosts this machine cannot reach.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  await codecServer?.stop();
  await handle?.terminate('test over').catch(() => undefined);
  await claimed?.terminate('test over').catch(() => undefined);
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await nativeConnection?.close();
  await connection?.close();
  await devServer?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

function workflowPage(page: Page, workflowId = handle.workflowId): Promise<unknown> {
  return page.goto(`${uiUrl}/namespaces/${devServer.namespace}/workflows/${workflowId}`);
}

/** The codec server endpoint set in the page header, as an operator does; the browser keeps it. */
async function setCodecEndpoint(page: Page, endpoint: string): Promise<void> {
  await page.getByTestId('data-encoder-status').click();
  await page.getByPlaceholder('Paste your endpoint here').fill(endpoint);
  await page.getByRole('button', { name: 'Apply' }).click();
}

describe('the Temporal Web UI with the codec server endpoint set', () => {
  it('shows a gzipped turn input as JSON on the workflow\'s page, and its turnState query result', async () => {
    // Verified up front, so the assertions after cannot pass on the UI without the codec server.
    expect((await handle.query(turnStateQuery)).pending[0].input).toEqual({ target: TARGET, count: 3 });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await workflowPage(page);
      await expect.poll(() => page.content(), { timeout: 30_000 }).toContain(GZIP_METADATA);
      expect(await page.content()).not.toContain(MARKER);

      await setCodecEndpoint(page, codecServer.endpoint);
      await workflowPage(page);
      // The Input panel prints the decoded turn input: the user's message, with the call's target.
      await page.getByText(MARKER).first().waitFor({ timeout: 30_000 });

      await page.getByRole('tab', { name: 'Queries' }).or(page.getByText('Queries', { exact: true })).first().click();
      await page.getByTestId('query-select-button').click();
      await page.getByRole('option', { name: 'turnState' }).click();
      await page.getByRole('button', { name: 'Run Query' }).click();
      await expect.poll(() => page.content(), { timeout: 30_000 }).toContain(approvalId);
      expect(await page.content()).toContain(MARKER);
    } finally {
      await page.close();
    }
  });

  it('shows a claimed turn input (kept in the content store) as its content, and the claim without the codec server', async () => {
    // History holds the claim: its encoding and a reference, not the content.
    const started = (await claimed.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(isClaimed(started)).toBe(true);
    const { ref } = claimReference(started)!;
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      // Without the codec server the UI prints the claim's data: the reference.
      await workflowPage(page, claimed.workflowId);
      await expect.poll(() => page.innerText('body'), { timeout: 30_000 }).toContain(ref);
      expect(await page.content()).not.toContain(CLAIM_MARKER);

      await setCodecEndpoint(page, codecServer.endpoint);
      await workflowPage(page, claimed.workflowId);
      // The Input panel prints the stored input: the user's message, from its first characters.
      await page.getByText(CLAIM_MARKER).first().waitFor({ timeout: 30_000 });
      expect(await page.innerText('body')).not.toContain(ref);
    } finally {
      await page.close();
    }
  });
});
