/**
 * A real OpenID Provider on loopback for sign-in tests: panva's `oidc-provider` (a certified
 * implementation) with one confidential client whose redirect URIs are the APIs' callbacks, PKCE
 * required, and accounts whose claims are `{ sub, email, groups }`. Its development interactions
 * serve the login and consent pages a browser fills in (any password is accepted).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
  close(): Promise<void>;
}

export async function startOpenIdProvider({ redirectUris, accounts }: { redirectUris: string[]; accounts: Record<string, TestAccount> }): Promise<OpenIdProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'turnpike-dashboard';
  const clientSecret = 'a-client-secret-for-tests-only-0123456789';
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
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['cookie-key-for-tests-only-0123456789'] },
    // Stated, so the provider does not log a notice for each default it falls back on.
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
  };
  const provider = new Provider(issuer, configuration);
  const authorizationRequests: URLSearchParams[] = [];
  const callback = provider.callback();
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = new URL(request.url ?? '/', issuer);
    if (url.pathname === '/auth') authorizationRequests.push(url.searchParams);
    callback(request, response);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    authorizationRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
