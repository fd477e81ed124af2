/**
 * The approval dashboard's first paint on the cluster, in Debian's Chromium (playwright-core, as
 * the dashboard's tests drive it): for each identity, from submitting the sign-in form to the
 * first card of its queue on screen (or, for a caller who may decide nothing, the empty queue's
 * notice), and the cards shown then. The dashboard's first listing comes from the live feed
 * (`GET /api/approvals/events`), one listing per rights to decide (api/approvals-feed.ts).
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { round } from '../stats.js';
import type { ApiProcess } from './topology.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Longer than a listing the API answers 503 for (its 30 s patience), so a slow first paint is measured, not cut off. */
const PAINT_TIMEOUT_MS = 90_000;

export interface FirstPaint {
  /** Sign-in submitted → the first card (or the empty notice) visible (ms). */
  ms: number;
  /** Cards on screen at that moment. */
  cards: number;
}

/** Each identity's first paint, one after another on `api` (each in a page of its own). */
export async function measureFirstPaint(api: ApiProcess, identities: readonly string[]): Promise<Record<string, FirstPaint> | { skipped: string }> {
  if (!existsSync(CHROMIUM)) return { skipped: `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)` };
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const paints: Record<string, FirstPaint> = {};
    for (const identity of identities) {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      try {
        await page.goto(`${api.base}/`);
        await page.fill('#token', `tok-${identity}`);
        const started = performance.now();
        await page.click('#login-form button[type=submit]');
        await page.waitForSelector('#approvals .card, #empty:not([hidden])', { timeout: PAINT_TIMEOUT_MS });
        const ms = performance.now() - started;
        paints[identity] = { ms: round(ms, 0), cards: await page.locator('#approvals .card').count() };
      } finally {
        await page.close();
      }
    }
    return paints;
  } finally {
    await browser.close();
  }
}
