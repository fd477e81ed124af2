/**
 * Signing in to the dashboard with a real OpenID Provider (panva's oidc-provider on loopback), in
 * a real Chromium, against the HTTP API and a real dev server: the authorization code flow with
 * PKCE lands back signed in with an httpOnly session cookie; a decision from the dashboard is
 * recorded under the signed-in identity; the page keeps no token anywhere a script can read;
 * signing out and an expired session both go back to the sign-in screen; a POST from another
 * origin without the session's CSRF token is refused and the call stays parked; bearer tokens
 * keep working for services; the event streams take the cookie.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startOpenIdProvider, type OpenIdProvider } from '../support/openid-provider.js';
import { freePort, launchChromium, signInAtProvider } from '../support/sign-in-browser.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const SHORT_SESSION_SECONDS = 3;

let turnpike: TurnpikeHarness;
let provider: OpenIdProvider;
let browser: Browser;
let api: FastifyInstance;
let shortApi: FastifyInstance;
let baseUrl: string;
let shortUrl: string;
let attacker: http.Server;
let attackerUrl: string;

beforeAll(async () => {
  const [port, shortPort] = [await freePort(), await freePort()];
  baseUrl = `http://127.0.0.1:${port}`;
  shortUrl = `http://127.0.0.1:${shortPort}`;
  [turnpike, provider] = await Promise.all([
    startTurnpike({ tools: testTools }),
    startOpenIdProvider({
      redirectUris: [`${baseUrl}/auth/callback`, `${shortUrl}/auth/callback`],
      accounts: { alice: { email: 'alice@example.test', groups: ['finance'] }, bob: { email: 'bob@example.test', groups: [] } },
    }),
  ]);
  const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  const login = (url: string) => ({ issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, redirectUri: `${url}/auth/callback`, scopes: ['openid', 'email', 'groups'] });
  api = await buildApi({ client, tokens: parseTokenMap('service-token:billing-service'), login: login(baseUrl), sessionSecret: 'a-session-secret-of-at-least-32-characters' });
  await api.listen({ host: '127.0.0.1', port });
  shortApi = await buildApi({ client, login: { ...login(shortUrl), sessionMaxAge: SHORT_SESSION_SECONDS } });
  await shortApi.listen({ host: '127.0.0.1', port: shortPort });
  // Another origin on the same site (cookies are not per port): its form posts carry the session cookie.
  attacker = http.createServer((request, response) => {
    const target = new URL(request.url ?? '/', 'http://x').searchParams.get('target') ?? '';
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(`<!doctype html><form id="f" method="post" action="${target}"><input name="approved" value="true"></form>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await shortApi?.close();
  await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve(undefined)));
  await provider?.close();
  await turnpike?.stop();
});

/** Opens the dashboard in a fresh browser context and signs in at the provider as `account`. */
async function signIn(account: string, url = baseUrl): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page } = await signInAtProvider(browser, url, account);
  await page.waitForSelector('#main:not([hidden])');
  return { context, page };
}

const status = (page: Page, path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
  page.evaluate(`fetch(${JSON.stringify(path)}, ${JSON.stringify(init)}).then((response) => response.status)`) as Promise<number>;

describe('signing in to the dashboard with the identity provider', () => {
  it('runs the code flow with PKCE and lands back signed in, with an httpOnly session cookie and no token in the page', async () => {
    const { context, page } = await signIn('alice');
    await expect(page.locator('#who').textContent()).resolves.toBe('signed in as alice@example.test');

    const request = provider.authorizationRequests.at(-1)!;
    expect(request.get('code_challenge_method')).toBe('S256');
    expect(request.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(request.get('state')).toBeTruthy();
    expect(request.get('nonce')).toBeTruthy();
    expect(request.get('redirect_uri')).toBe(`${baseUrl}/auth/callback`);

    const session = (await context.cookies(baseUrl)).find((cookie) => cookie.name === 'turnpike_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });

    const me = JSON.parse(await page.evaluate(`fetch('/api/me').then((response) => response.text())`));
    expect(me).toMatchObject({ identity: 'alice@example.test', groups: ['finance'] });
    expect(me.csrfToken).toMatch(/^[\w-]{43}$/);
    // Nothing a page script reads holds a token: no storage, and the session cookie is invisible to it.
    const readable = (await page.evaluate(`JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })`)) as string;
    expect(JSON.parse(readable)).toEqual({ local: {}, session: {}, cookie: '' });
    await context.close();
  });

  it('records a decision from the dashboard under the signed-in identity, with its groups', async () => {
    const { context, page } = await signIn('alice');
    const handle = await turnpike.startTurn({ text: use('finance_transfer', { account: 'ops', amount: 120 }) });
    const [pending] = await waitForPending(handle);
    // EventSource sends the cookie same-origin: the streams need no stream token for a signed-in page.
    const firstEvent = (url: string) =>
      page.evaluate(`new Promise((resolve, reject) => { const source = new EventSource(${JSON.stringify(url)}); source.onmessage = (event) => { source.close(); resolve(JSON.parse(event.data)); }; source.onerror = () => { source.close(); reject(new Error('refused')); }; })`);
    await expect(firstEvent('/api/approvals/events')).resolves.toMatchObject({ approver: 'alice@example.test' });
    await expect(firstEvent(`/api/turns/${encodeURIComponent(handle.workflowId)}/events`)).resolves.toMatchObject({ offset: 0 });
    const card = page.locator(`.card[data-key="${pending.approvalId}"]`);
    await card.waitFor({ timeout: 20_000 });
    await card.locator('.reason').fill('signed in with the provider');
    await card.locator('button.approve').click();
    await page.locator('.toast.ok').waitFor();
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approver: 'alice@example.test', reason: 'signed in with the provider' } });
    await context.close();
  });

  it('signs out: back to the sign-in screen, and /api/me is then 401', async () => {
    const { context, page } = await signIn('bob');
    await page.locator('#sign-out').click();
    await page.waitForSelector('#login:not([hidden])');
    await expect(page.locator('#sign-in').isVisible()).resolves.toBe(true);
    await expect(status(page, '/api/me')).resolves.toBe(401);
    await page.reload();
    await page.waitForSelector('#login:not([hidden])');
    expect((await context.cookies(baseUrl)).filter((cookie) => cookie.name === 'turnpike_session' && cookie.value !== '')).toEqual([]);
    await context.close();
  });

  it('asks to sign in again when the session expires', async () => {
    const handle = await turnpike.startTurn({ startedBy: 'bob@example.test', text: use('guarded_action', { target: 'expiring', count: 1 }) });
    await waitForPending(handle);
    const { context, page } = await signIn('bob', shortUrl);
    await expect(page.locator('#who').textContent()).resolves.toBe('signed in as bob@example.test');
    // A turn's stream opened with the cookie ends with the session: reconnecting is then refused.
    const events = `/api/turns/${encodeURIComponent(handle.workflowId)}/events`;
    await page.evaluate(
      `void (window.streamEnded = new Promise((resolve) => { let seen = 0; const source = new EventSource(${JSON.stringify(events)}); source.onmessage = () => seen++; source.onerror = () => { if (source.readyState === EventSource.CLOSED) resolve(seen); }; }))`,
    );
    await page.waitForSelector('#login:not([hidden])', { timeout: (SHORT_SESSION_SECONDS + 5) * 1000 });
    await expect(page.locator('#login-message').textContent()).resolves.toMatch(/sign in again/);
    await expect(status(page, '/api/me')).resolves.toBe(401);
    await expect(page.evaluate('window.streamEnded')).resolves.toBeGreaterThan(0);
    await handle.cancel();
    await context.close();
  });

  it('refuses a POST from another origin without the CSRF token (403), and the call stays parked', async () => {
    const { context, page } = await signIn('alice');
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'csrf', count: 1 }) });
    const [pending] = await waitForPending(handle);
    const decision = `${baseUrl}/api/turns/${encodeURIComponent(handle.workflowId)}/approvals/${encodeURIComponent(pending.approvalId!)}`;

    const other = await context.newPage();
    await other.goto(`${attackerUrl}/?target=${encodeURIComponent(decision)}`);
    const [response] = await Promise.all([other.waitForNavigation(), other.evaluate(`document.getElementById('f').submit()`)]);
    expect(response?.status()).toBe(403);
    expect(JSON.parse(await response!.text())).toMatchObject({ error: { type: 'InvalidCsrfToken' } });
    // Same-origin, with the cookie but without the token: refused too.
    await expect(status(page, decision.slice(baseUrl.length), { method: 'POST', headers: { 'content-type': 'application/json' } })).resolves.toBe(403);

    const state = await handle.query<{ pending: unknown[] }>('turnState');
    expect(state.pending).toHaveLength(1);
    await handle.cancel();
    await context.close();
  });

  it('keeps bearer tokens for services, with no CSRF token, and exchanges a pasted token for a session', async () => {
    const me = await fetch(`${baseUrl}/api/me`, { headers: { authorization: 'Bearer service-token' } });
    expect(await me.json()).toEqual({ identity: 'billing-service', groups: [] });
    const stream = await fetch(`${baseUrl}/api/approvals/stream-token`, { method: 'POST', headers: { authorization: 'Bearer service-token' } });
    expect(stream.status).toBe(200);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${baseUrl}/`);
    await page.fill('#token', 'service-token');
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#main:not([hidden])');
    await expect(page.locator('#who').textContent()).resolves.toBe('signed in as billing-service');
    const readable = (await page.evaluate(`JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })`)) as string;
    expect(JSON.parse(readable)).toEqual({ local: {}, session: {}, cookie: '' });
    await context.close();
  });
});
