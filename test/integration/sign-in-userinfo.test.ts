/**
 * A sign-in whose groups come from the identity provider's userinfo (the provider keeps them out
 * of the ID token, as oidc-provider does when it issues an access token): when userinfo cannot be
 * read, the callback refuses, saying why, and the browser is signed in as no one, rather than
 * signed in with no groups and so fewer rights than the person has. One failed read is asked
 * again; the person is then signed in with their groups.
 */
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startOpenIdProvider, type OpenIdProvider } from '../support/openid-provider.js';
import { freePort, launchChromium, signInAtProvider } from '../support/sign-in-browser.js';

let provider: OpenIdProvider;
let browser: Browser;
let api: FastifyInstance;
let connection: Connection;
let baseUrl: string;

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  provider = await startOpenIdProvider({
    redirectUris: [`${baseUrl}/auth/callback`],
    accounts: { alice: { email: 'alice@example.test', groups: ['finance'] } },
  });
  // Signing in asks nothing of Temporal: a connection opened on first use, which is never.
  connection = Connection.lazy({ address: inject('temporalAddress') });
  const client = new TurnpikeClient({ client: new Client({ connection, namespace: inject('temporalNamespace') }) });
  api = await buildApi({
    client,
    login: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, redirectUri: `${baseUrl}/auth/callback`, scopes: ['openid', 'email', 'groups'] },
  });
  await api.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
});

afterEach(() => provider.failUserinfo(0));

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await provider?.close();
  await connection?.close();
});

/** Who the API takes the browser for: `/api/me` from the page, as the dashboard asks. */
const me = (page: Page) =>
  page.evaluate(`fetch('/api/me').then(async (response) => ({ status: response.status, body: await response.json() }))`) as Promise<{ status: number; body: { identity?: string; groups?: string[] } }>;

describe("sign-in when the provider's userinfo fails", () => {
  it('refuses the sign-in, saying why, and leaves the browser signed in as no one', async () => {
    const before = provider.userinfoRequests();
    provider.failUserinfo(2);
    const { context, page, callback } = await signInAtProvider(browser, baseUrl, 'alice');
    expect(callback.status()).toBe(400);
    const text = await callback.text();
    expect(text).toContain('Signing in failed: the identity provider&#39;s userinfo could not be read');
    expect(text).toContain('signing in without it would leave out your groups');
    // Asked twice, both failed.
    expect(provider.userinfoRequests() - before).toBe(2);
    await expect(me(page)).resolves.toMatchObject({ status: 401 });
    await page.goto(`${baseUrl}/`);
    await page.waitForSelector('#login:not([hidden])');
    await context.close();
  });

  it('asks userinfo again after one failure, and signs the person in with their groups', async () => {
    const before = provider.userinfoRequests();
    provider.failUserinfo(1);
    const { context, page, callback } = await signInAtProvider(browser, baseUrl, 'alice');
    expect(callback.status()).toBe(302);
    expect(provider.userinfoRequests() - before).toBe(2);
    await expect(me(page)).resolves.toMatchObject({ status: 200, body: { identity: 'alice@example.test', groups: ['finance'] } });
    await context.close();
  });

  it('signs in with the groups userinfo gives when it answers', async () => {
    const before = provider.userinfoRequests();
    const { context, page, callback } = await signInAtProvider(browser, baseUrl, 'alice');
    expect(callback.status()).toBe(302);
    // The ID token holds no groups: they came from userinfo.
    expect(provider.userinfoRequests() - before).toBe(1);
    await expect(me(page)).resolves.toMatchObject({ status: 200, body: { identity: 'alice@example.test', groups: ['finance'] } });
    await context.close();
  });
});
