/**
 * A real Chromium (Debian's, through playwright-core) for the sign-in tests, and the steps of
 * signing in at the test's OpenID Provider (test/support/openid-provider.ts): its login and
 * consent pages, up to the provider sending the browser back to the API's `/auth/callback`.
 */
import { existsSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A port free right now, for an API whose callback URL the provider must know before it starts. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Opens the dashboard at `url` in a fresh browser context, presses Sign in and signs in at the
 * provider as `account`; returns with the API's answer to the callback (a 302 to `/` when it
 * signed the browser in, the sign-in failed page when it refused).
 */
export async function signInAtProvider(browser: Browser, url: string, account: string): Promise<{ context: BrowserContext; page: Page; callback: Response }> {
  const context = await browser.newContext();
  // The provider's development pages import a web font this machine cannot fetch.
  await context.route('https://fonts.googleapis.com/**', (route) => route.abort());
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.locator('#sign-in').click();
  await page.locator('input[name=login]').fill(account);
  await page.locator('input[name=password]').fill('any password');
  await page.locator('button[type=submit]').click();
  // The consent page; the provider then redirects to the callback.
  const callback = page.waitForResponse((response) => response.url().startsWith(`${url}/auth/callback`));
  await page.locator('button[type=submit]', { hasText: 'Continue' }).click();
  return { context, page, callback: await callback };
}
