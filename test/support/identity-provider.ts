/**
 * A local OpenID identity provider for tests: real key pairs, a JWKS endpoint on loopback, and
 * real signed JWTs — good ones and the hostile kinds an API must refuse.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWTPayload, type KeyObject } from 'jose';

export interface IdentityProvider {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** A token signed with the provider's published key. */
  sign(claims: JWTPayload & { sub: string }, options?: { expiresIn?: string | number; audience?: string; issuer?: string }): Promise<string>;
  /** Signed by a key the JWKS does not publish. */
  signWithUnknownKey(claims: JWTPayload & { sub: string }): Promise<string>;
  /** `alg: none`. */
  unsigned(claims: JWTPayload & { sub: string }): string;
  close(): Promise<void>;
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const published = await generateKeyPair('RS256', { extractable: true });
  const stranger = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(published.publicKey)), kid: 'published-1', alg: 'RS256', use: 'sig' };
  const server = http.createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/`;
  const audience = 'turnpike-approvals';

  async function signWith(key: CryptoKey | KeyObject, kid: string, claims: JWTPayload, options: { expiresIn?: string | number; audience?: string; issuer?: string } = {}) {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer(options.issuer ?? issuer)
      .setAudience(options.audience ?? audience)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '10m')
      .sign(key);
  }

  return {
    issuer,
    audience,
    jwksUrl: `${base}/.well-known/jwks.json`,
    sign: (claims, options) => signWith(published.privateKey, 'published-1', claims, options),
    signWithUnknownKey: (claims) => signWith(stranger.privateKey, 'published-1', claims),
    unsigned: (claims) => new UnsecuredJWT(claims).setIssuer(issuer).setAudience(audience).setIssuedAt().setExpirationTime('10m').encode(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
