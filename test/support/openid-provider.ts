/**
 * A real OpenID Provider on loopback for sign-in tests: panva's `oidc-provider` (a certified
 * implementation) with one confidential client whose redirect URIs are the APIs' callbacks, PKCE
 * required, and accounts whose claims are `{ sub, email, groups }`. Its development interactions
 * serve the login and consent pages a browser fills in (any password is accepted).
 *
 * Its signing keys are the test's: it publishes them at its `jwks_uri`, and `rotateKeys()` rotates
 * them as a provider does (a new key, published first, signs every ID token from then on; the old
 * one stays published). `forgeIdTokens()` replaces the ID token its token endpoint returns, as an
 * attacker between the API and the provider would. `failUserinfo(n)` answers the next `n` userinfo
 * requests with 503, as a provider whose userinfo endpoint is down does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';

export interface TestAccount {
  email: string;
  groups: string[];
}

export interface OpenIdProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Authorization requests the provider received (their query parameters). */
  authorizationRequests: URLSearchParams[];
  /** The id of the key that signs ID tokens now. */
  signingKeyId(): string;
  /** Rotates the signing key: a new key, published first in the JWKS, signs every ID token from now on. Returns its id. */
  rotateKeys(): Promise<string>;
  /** Replaces each ID token the token endpoint returns with what `forge` makes of it; `undefined` stops. */
  forgeIdTokens(forge: ((idToken: string) => string | Promise<string>) | undefined): void;
  /** Signs `payload` as the provider's ID tokens are signed (RS256), under `kid`, with a key the provider never published. */
  signWithStrangerKey(payload: JWTPayload, kid: string): Promise<string>;
  /** How many times the JWKS was read. */
  jwksReads(): number;
  /** Answers the next `times` userinfo requests with 503 (0 stops). */
  failUserinfo(times: number): void;
  /** How many userinfo requests the provider received, failed ones included. */
  userinfoRequests(): number;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  privateJwk: JWK;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const claims = { kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), ...claims }, privateJwk: { ...(await exportJWK(privateKey)), ...claims } };
}

const resign = (idToken: string, key: SigningKey) => new SignJWT(decodeJwt(idToken)).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(key.privateKey);

export async function startOpenIdProvider({ redirectUris, accounts }: { redirectUris: string[]; accounts: Record<string, TestAccount> }): Promise<OpenIdProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'turnpike-dashboard';
  const clientSecret = 'a-client-secret-for-tests-only-0123456789';
  // oidc-provider signs with the first key; after a rotation, the token endpoint's ID tokens are re-signed with the newest.
  const first = await signingKey('key-1');
  const published = [first];
  const stranger = await signingKey('stranger');
  let forge: ((idToken: string) => string | Promise<string>) | undefined;
  let jwksReads = 0;
  let userinfoFailures = 0;
  let userinfoRequests = 0;
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    findAccount: (_context, sub) => {
      const account = accounts[sub];
      if (!account) return undefined;
      return { accountId: sub, claims: () => ({ sub, email: account.email, email_verified: true, groups: account.groups }) };
    },
    jwks: { keys: [first.privateJwk] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['cookie-key-for-tests-only-0123456789'] },
    // Stated, so the provider does not log a notice for each default it falls back on.
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
  };
  const provider = new Provider(issuer, configuration);
  const authorizationRequests: URLSearchParams[] = [];
  provider.use(async (context, next) => {
    await next();
    const body = context.body as { id_token?: unknown } | undefined;
    if (context.path !== '/token' || !body || typeof body.id_token !== 'string') return;
    let idToken = body.id_token;
    if (published[0] !== first) idToken = await resign(idToken, published[0]);
    if (forge) idToken = await forge(idToken);
    body.id_token = idToken;
  });
  const callback = provider.callback();
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = new URL(request.url ?? '/', issuer);
    if (url.pathname === '/auth') authorizationRequests.push(url.searchParams);
    if (url.pathname === '/jwks') {
      jwksReads++;
      response.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys: published.map((key) => key.publicJwk) }));
      return;
    }
    // oidc-provider's userinfo endpoint.
    if (url.pathname === '/me') {
      userinfoRequests++;
      if (userinfoFailures > 0) {
        userinfoFailures--;
        response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'temporarily_unavailable' }));
        return;
      }
    }
    callback(request, response);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    authorizationRequests,
    signingKeyId: () => published[0].kid,
    rotateKeys: async () => {
      published.unshift(await signingKey(`key-${published.length + 1}`));
      return published[0].kid;
    },
    forgeIdTokens: (replace) => (forge = replace),
    signWithStrangerKey: (payload, kid) => new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid }).sign(stranger.privateKey),
    jwksReads: () => jwksReads,
    failUserinfo: (times) => (userinfoFailures = times),
    userinfoRequests: () => userinfoRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
