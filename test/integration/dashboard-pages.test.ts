/**
 * The dashboard's queue a page at a time, in Chromium: with pages of two turns
 * (`buildApi({ listingLimit: 2 })`), the live feed shows the two soonest-expiring approvals, in
 * expiry order though they were started in another; "Show more" adds the next two
 * (`GET /api/approvals?after=`) and then goes away; the feed's next listing keeps them. The pages
 * themselves: expiry-pages.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { launchChromium } from '../support/sign-in-browser.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';


let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({ client, tokens: parseTokenMap('alice-token:alice'), listingLimit: 2, approvalsFeedIntervalMs: 300 });
  await api.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await turnpike?.stop();
});

async function openDashboard(token: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(`${baseUrl}/`);
  await page.fill('#token', token);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#main:not([hidden])');
  return page;
}

/** The approval cards' keys, top to bottom, once there are `count` (leaving cards excluded). */
async function cardsOnceThere(page: Page, count: number): Promise<string[]> {
  const cards = page.locator('#approvals .card:not(.leaving)');
  const deadline = Date.now() + 30_000;
  while ((await cards.count()) !== count && Date.now() < deadline) await page.waitForTimeout(100);
  return cards.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-key') ?? ''));
}

describe('the dashboard’s queue, a page at a time', () => {
  it('shows the two soonest-expiring approvals first, and Show more adds the next page', async () => {
    const approvalIds = new Map<string, string>();
    for (const timeout of ['3h', '1h', '4h', '2h']) {
      const turnId = `dashboard-pages-${timeout}-${randomUUID().slice(0, 8)}`;
      await client.startTurn({ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('guarded_action', { target: `t-${timeout}`, count: 1 }) }], approvalTimeout: timeout }, { turnId });
      const [call] = await waitForPending(client.turn(turnId), 1);
      approvalIds.set(timeout, call!.approvalId!);
    }
    // Visibility lags the turns: wait until the API lists all four.
    for (let attempt = 0; attempt < 150; attempt++) {
      if ((await client.listParkedCalls({ approver: { identity: 'alice' } })).length === 4) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [soonest, second, third, fourth] = ['1h', '2h', '3h', '4h'].map((timeout) => approvalIds.get(timeout)!);

    const page = await openDashboard('alice-token');
    try {
      expect(await cardsOnceThere(page, 2)).toEqual([soonest, second]);
      await page.waitForSelector('#show-more', { state: 'visible' });
      await page.click('#show-more');
      expect(await cardsOnceThere(page, 4)).toEqual([soonest, second, third, fourth]);
      await page.waitForSelector('#show-more', { state: 'hidden' });
      expect(await page.textContent('#approval-count')).toBe('4');
      // The feed lists the first page again (every 300 ms): the cards Show more added stay.
      await page.waitForTimeout(1_000);
      expect(await cardsOnceThere(page, 4)).toEqual([soonest, second, third, fourth]);
    } finally {
      await page.close();
    }
  });
});
