/**
 * "Fork from here" on a turn's page of the dashboard, in Chromium: the fork starts after the step
 * chosen, on the model given, and the page links to it; the original's page lists its forks.
 */
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { serveApi } from '../support/api-server.js';
import { noteStarted } from '../support/history-recorder.js';
import { executions, testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;
let base: string;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools });
  ({ client, api, base } = await serveApi(turnpike));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
  await turnpike?.stop();
  await fake?.restore();
});

describe('fork from here, in the dashboard', () => {
  it("forks a turn from its page at the step chosen, on another model, and links to the fork", async () => {
    const turnId = `fork-ui-${randomUUID()}`;
    fake.script('openai', [
      { toolCalls: [{ name: 'record_action', input: { action: 'ui-step-1' } }] },
      { toolCalls: [{ name: 'record_action', input: { action: 'ui-step-2' } }] },
      { text: 'done in three steps' },
    ]);
    // Started by alice, the API's caller here, so she may read and fork it.
    noteStarted(await client.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'Three steps.' }] }, { turnId, startedBy: 'alice' }));
    await client.turnResult(turnId);
    const ran = executions.length;
    fake.script('openai', [{ text: 'the fork answers' }]);

    const page = await browser.newPage();
    await page.goto(`${base}/?turn=${encodeURIComponent(turnId)}`);
    await page.fill('#token', 'alice-token');
    await page.click('#login-form button[type=submit]');
    await page.locator('#turn-fork:not([hidden])').waitFor();
    await page.fill('#fork-step', '1');
    await page.fill('#fork-model', 'openai:gpt-4.1');
    await page.click('#turn-fork button[type=submit]');
    const link = page.locator('#fork-result a');
    await link.waitFor();
    const forkId = (await link.textContent())!;
    expect(forkId.startsWith(`${turnId}/fork-1-`)).toBe(true);
    noteStarted(client.turn(forkId));
    expect((await client.turnResult(forkId)).text).toBe('the fork answers');
    const last = fake.requests.filter((request) => request.provider === 'openai').at(-1)!;
    expect(last.body.model).toBe('gpt-4.1');
    expect(JSON.stringify(last.body.messages)).toContain('ui-step-1');
    expect(JSON.stringify(last.body.messages)).not.toContain('ui-step-2');
    expect(executions.length).toBe(ran);

    // The original's page lists the fork (visibility: it may take a moment), linked to its page.
    const forkLink = page.locator(`#turn-fork-list a[href="?turn=${encodeURIComponent(forkId)}"]`);
    for (let attempt = 0; attempt < 30 && (await forkLink.count()) === 0; attempt++) {
      await page.goto(`${base}/?turn=${encodeURIComponent(turnId)}`);
      await page.locator('#turn-fork:not([hidden])').waitFor();
      await page.waitForTimeout(500);
    }
    await forkLink.waitFor();
    expect(await page.locator('#turn-fork-list li').first().textContent()).toContain('from step 1, completed, by alice');
    await forkLink.click();
    await page.waitForURL((url) => url.search === `?turn=${encodeURIComponent(forkId)}`);
    await expect.poll(() => page.locator('#turn-status').textContent()).toBe('completed');
    await page.close();
  });
});
