/**
 * A sign-in's ID token must be the identity provider's (api/id-token-signature.ts): with a real
 * OpenID Provider (`oidc-provider`, PKCE required) and a real Chromium, the token endpoint's ID
 * token is replaced on its way to the API — re-signed with another key under the provider's key
 * id, signed under a key id the provider does not publish, bob's own token with its subject
 * changed to alice — and each time the callback refuses, saying why, and the browser is signed in
 * as no one. After the provider rotates its keys, a token signed by the new key is accepted (the
 * API reads the keys again, once) and one under an unknown key id still is not.
 */
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startOpenIdProvider, type OpenIdProvider } from '../support/openid-provider.js';
import { freePort, launchChromium, signInAtProvider } from '../support/sign-in-browser.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let provider: OpenIdProvider;
let browser: Browser;
let api: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  [turnpike, provider] = await Promise.all([
    startTurnpike({ tools: testTools }),
    startOpenIdProvider({
      redirectUris: [`${baseUrl}/auth/callback`],
      accounts: { alice: { email: 'alice@example.test', groups: ['finance'] }, bob: { email: 'bob@example.test', groups: [] } },
    }),
  ]);
  const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({
    client,
    login: {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      redirectUri: `${baseUrl}/auth/callback`,
      scopes: ['openid', 'email', 'groups'],
      // Every unknown key id reads the keys again, so that the count of reads below is exact.
      jwksCooldownSeconds: 0,
    },
  });
  await api.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
});

afterEach(() => provider.forgeIdTokens(undefined));

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await provider?.close();
  await turnpike?.stop();
});

/** Who the API takes the browser for: `/api/me` from the page, as the dashboard asks. */
const me = (page: Page) =>
  page.evaluate(`fetch('/api/me').then(async (response) => ({ status: response.status, body: await response.json() }))`) as Promise<{ status: number; body: { identity?: string } }>;

/** Signs in as `account` and expects the callback to refuse with `message`, leaving no session. */
async function expectRefused(account: string, message: RegExp): Promise<void> {
  const { context, page, callback } = await signInAtProvider(browser, baseUrl, account);
  expect(callback.status()).toBe(400);
  expect(await callback.text()).toMatch(message);
  await expect(me(page)).resolves.toMatchObject({ status: 401 });
  await page.goto(`${baseUrl}/`);
  await page.waitForSelector('#login:not([hidden])');
  await context.close();
}

/** The three parts of a JWT, its payload decoded. */
function parts(idToken: string) {
  const [header, , signature] = idToken.split('.');
  return { header, payload: decodeJwt(idToken), signature };
}

describe("the ID token of a sign-in is verified against the provider's keys", () => {
  it("signs in with the provider's own ID token, reading its keys once", async () => {
    const { context, page, callback } = await signInAtProvider(browser, baseUrl, 'alice');
    expect(callback.status()).toBe(302);
    await page.waitForSelector('#main:not([hidden])');
    await expect(me(page)).resolves.toMatchObject({ status: 200, body: { identity: 'alice@example.test' } });
    expect(provider.jwksReads()).toBe(1);
    await context.close();
  });

  it.each([
    ["re-signed with another key under the provider's key id", (idToken: string) => provider.signWithStrangerKey(parts(idToken).payload, provider.signingKeyId()), /signature does not verify/],
    ['signed with a key id the provider does not publish', (idToken: string) => provider.signWithStrangerKey(parts(idToken).payload, 'not-published'), /a key the identity provider does not publish/],
    [
      "that is bob's own with its subject changed to alice (bob's signature kept)",
      (idToken: string) => {
        const { header, payload, signature } = parts(idToken);
        expect(payload.sub).toBe('bob');
        return `${header}.${Buffer.from(JSON.stringify({ ...payload, sub: 'alice' })).toString('base64url')}.${signature}`;
      },
      /signature does not verify/,
    ],
  ])('refuses an ID token %s, and the browser is signed in as no one', async (_kind, forge, message) => {
    provider.forgeIdTokens(forge);
    await expectRefused('bob', message);
  });

  it('accepts a key the provider rotated in after the API read its keys (reading them again once), and still refuses an unknown key id', async () => {
    const before = provider.jwksReads();
    expect(before).toBeGreaterThan(0);
    const rotated = await provider.rotateKeys();

    const { context, page, callback } = await signInAtProvider(browser, baseUrl, 'alice');
    expect(callback.status()).toBe(302);
    await page.waitForSelector('#main:not([hidden])');
    await expect(me(page)).resolves.toMatchObject({ status: 200, body: { identity: 'alice@example.test' } });
    expect(provider.jwksReads()).toBe(before + 1);
    await context.close();

    // bob's token as the provider signed it with the new key, re-signed under an unknown key id.
    provider.forgeIdTokens(async (idToken) => {
      expect(parts(idToken).payload.sub).toBe('bob');
      expect(JSON.parse(Buffer.from(parts(idToken).header, 'base64url').toString()).kid).toBe(rotated);
      return provider.signWithStrangerKey(parts(idToken).payload, 'key-99');
    });
    await expectRefused('bob', /a key the identity provider does not publish/);
    // An unknown key id reads the keys again, once, and is then refused.
    expect(provider.jwksReads()).toBe(before + 2);
  });
});
