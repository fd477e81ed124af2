/**
 * What the useChat browser tests share: a turnpike worker, the HTTP API with `/api/chat`, the
 * test page of test/support/ui-chat-page/ (bundled by esbuild, served from the API's own origin
 * so the browser's requests need no CORS) and Debian's headless Chromium through playwright-core.
 *
 *   const chat = await startUiChat({ tools: testTools });
 *   const page = await chat.openPage(chatId, { token: 'alice-token' });
 *   ...
 *   await chat.stop();
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startTurnpike, type TurnpikeHarness } from './turnpike-harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PAGE_DIRECTORY = fileURLToPath(new URL('./ui-chat-page/', import.meta.url));
const ESBUILD = fileURLToPath(new URL('../../node_modules/.bin/esbuild', import.meta.url));

export interface UiChat {
  turnpike: TurnpikeHarness;
  client: TurnpikeClient;
  api: FastifyInstance;
  browser: Browser;
  /** The API's origin, which serves the page at /ui-chat/. */
  baseUrl: string;
  /**
   * A new page of the chat `chatId`: `token` signs its requests in (without it, the browser's
   * session cookie), `body` is added to every request's body (useChat's `body`).
   */
  openPage(chatId: string, options?: { token?: string; body?: Record<string, unknown> }): Promise<Page & { errors: string[] }>;
  stop(): Promise<void>;
}

/** Starts the worker, the API (bearer token `alice-token` for alice) and Chromium; `stop()` ends them all. */
export async function startUiChat(harness: Parameters<typeof startTurnpike>[0]): Promise<UiChat> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium (bash .ci/run does), or set CHROMIUM_PATH`);
  const bundleDirectory = mkdtempSync(join(tmpdir(), 'turnpike-ui-chat-'));
  let turnpike: TurnpikeHarness | undefined;
  let api: FastifyInstance | undefined;
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    await api?.close();
    await turnpike?.stop();
    rmSync(bundleDirectory, { recursive: true, force: true });
  };
  try {
    execFileSync(ESBUILD, [join(PAGE_DIRECTORY, 'page.js'), '--bundle', '--format=esm', '--platform=browser', `--outfile=${join(bundleDirectory, 'page.js')}`, '--log-level=warning']);
    turnpike = await startTurnpike(harness);
    // With the worker's live channel, the API's /api/chat reads live (docs/streaming.md).
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, ...(harness.liveDeltas ? { liveDeltas: harness.liveDeltas } : {}) });
    api = await buildApi({ client, tokens: parseTokenMap('alice-token:alice') });
    api.get('/ui-chat/', (_request, reply) => reply.type('text/html; charset=utf-8').send(readFileSync(join(PAGE_DIRECTORY, 'index.html'), 'utf8')));
    api.get('/ui-chat/page.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').send(readFileSync(join(bundleDirectory, 'page.js'), 'utf8')));
    await api.listen({ host: '127.0.0.1', port: 0 });
    const baseUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Without the background-networking flags Chromium keeps dialling hosts this machine cannot reach.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const opened = browser;
    const openPage: UiChat['openPage'] = async (chatId, { token, body } = {}) => {
      const page = Object.assign(await opened.newPage(), { errors: [] as string[] });
      page.on('pageerror', (error) => page.errors.push(error.message));
      const query = new URLSearchParams({ chat: chatId, ...(token ? { token } : {}), ...(body ? { body: JSON.stringify(body) } : {}) });
      await page.goto(`${baseUrl}/ui-chat/?${query}`);
      return page;
    };
    return { turnpike, client, api, browser, baseUrl, openPage, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The last message of every request the page sends to /api/chat, in order. */
export function recordChatRequests(page: Page): Array<{ lastRole: string; lastParts: Array<{ type: string; state?: string; approval?: unknown }> }> {
  const requests: ReturnType<typeof recordChatRequests> = [];
  page.on('request', (request) => {
    if (!request.url().endsWith('/api/chat')) return;
    const body = JSON.parse(request.postData() ?? '{}') as { messages: Array<{ role: string; parts: Array<{ type: string; state?: string }> }> };
    const last = body.messages.at(-1)!;
    requests.push({ lastRole: last.role, lastParts: last.parts });
  });
  return requests;
}

/** Types `text` into the composer and sends it. */
export async function sendFromPage(page: Page, text: string): Promise<void> {
  await page.fill('#prompt', text);
  await page.click('#composer button[type=submit]');
}

/**
 * Checks that the page built `text` from the stream: an empty text part first (text-start), then
 * the deltas appended to it (how many depends on how the worker batched them), each a prefix.
 */
export async function expectStreamedText(page: Page, text: string): Promise<void> {
  const shownTexts = (await page.evaluate('window.shownTexts')) as Record<string, string[]>;
  const shown = Object.values(shownTexts).find((texts) => texts.at(-1) === text);
  expect(shown, `the page never showed ${JSON.stringify(text)}`).toBeDefined();
  expect(shown![0]).toBe('');
  for (const part of shown!) expect(text.startsWith(part)).toBe(true);
}
