/**
 * Signing in to the dashboard with the organisation's identity provider: the OpenID Connect
 * authorization code flow with PKCE (S256), state and nonce, through `openid-client`.
 *
 *   GET  /auth/login      → 302 to the provider; the PKCE verifier, state and nonce wait in the session cookie
 *   GET  /auth/callback   → exchanges the code, verifies the ID token (its claims with openid-client, its
 *                           signature against the provider's keys with jose: api/id-token-signature.ts),
 *                           starts the session, 302 to /; a refused callback leaves no session
 *   POST /auth/logout     → ends the session (204)
 *   POST /auth/token      → with `Authorization: Bearer`, starts a session for that token's caller (the
 *                           dashboard's token form, for development tokens); the page keeps no token
 *   GET  /auth/csrf       → { csrfToken } of the current session
 *
 * The caller comes from the ID token exactly as for bearer JWTs (`callerFromClaims`): identity
 * from `identityClaim`, else `email`, else `sub`; groups from `groupsClaim` (default `groups`),
 * from the provider's userinfo when the ID token leaves them out (a userinfo that fails twice
 * fails the sign-in: nobody is signed in with fewer groups than they have). The provider's access and ID
 * tokens are dropped after the callback: the session holds only the caller.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type * as OpenIdClient from 'openid-client';
import { importOptional } from '../peers/optional-packages.js';
import { callerFromClaims, type Authenticator, type Caller } from './auth.js';
import { idTokenSignatureVerifier } from './id-token-signature.js';
import type { Sessions } from './session.js';

export interface LoginOptions {
  /** The provider's issuer URL; its `/.well-known/openid-configuration` is read on the first sign-in. */
  issuer: string;
  clientId: string;
  /** For a confidential client (`client_secret_basic`); a public client relies on PKCE alone. */
  clientSecret?: string;
  /** This API's `/auth/callback` as the provider knows it, e.g. `https://turnpike.example.com/auth/callback`. */
  redirectUri: string;
  /** Default `openid email profile`. */
  scopes?: string[];
  /** Claim holding the approver identity. Default `email`, else `sub`. */
  identityClaim?: string;
  /** Claim holding the caller's groups. Default `groups`. */
  groupsClaim?: string;
  /** Claim holding the caller's tenant (docs/http-api.md, "Tenants"); none by default. */
  tenantClaim?: string;
  /** How long a sign-in lasts, in seconds. Default 8 hours. */
  sessionMaxAge?: number;
  /**
   * After the provider's keys are read, an ID token signed by a key not among them is refused
   * without reading them again for this long, in seconds. Default 30. (A key the provider rotated
   * in is found by reading them again once, after this.)
   */
  jwksCooldownSeconds?: number;
}

/** A sign-in must come back from the provider within this long. */
const LOGIN_TIMEOUT_MS = 10 * 60 * 1000;
const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

/**
 * `TURNPIKE_LOGIN_ISSUER`, `TURNPIKE_LOGIN_CLIENT_ID`, `TURNPIKE_LOGIN_REDIRECT_URI`, optional
 * `TURNPIKE_LOGIN_CLIENT_SECRET`, `TURNPIKE_LOGIN_SCOPES` (space-separated), and the claims of
 * `TURNPIKE_OIDC_IDENTITY_CLAIM` / `TURNPIKE_OIDC_GROUPS_CLAIM` / `TURNPIKE_OIDC_TENANT_CLAIM`; undefined when none is set.
 */
export function loginOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): LoginOptions | undefined {
  const { TURNPIKE_LOGIN_ISSUER: issuer, TURNPIKE_LOGIN_CLIENT_ID: clientId, TURNPIKE_LOGIN_REDIRECT_URI: redirectUri } = env;
  if (!issuer && !clientId && !redirectUri) return undefined;
  if (!issuer || !clientId || !redirectUri) {
    throw new Error('Set all of TURNPIKE_LOGIN_ISSUER, TURNPIKE_LOGIN_CLIENT_ID and TURNPIKE_LOGIN_REDIRECT_URI to sign in with an identity provider');
  }
  return {
    issuer,
    clientId,
    redirectUri,
    ...(env.TURNPIKE_LOGIN_CLIENT_SECRET ? { clientSecret: env.TURNPIKE_LOGIN_CLIENT_SECRET } : {}),
    ...(env.TURNPIKE_LOGIN_SCOPES ? { scopes: env.TURNPIKE_LOGIN_SCOPES.split(/\s+/).filter(Boolean) } : {}),
    ...(env.TURNPIKE_OIDC_IDENTITY_CLAIM ? { identityClaim: env.TURNPIKE_OIDC_IDENTITY_CLAIM } : {}),
    ...(env.TURNPIKE_OIDC_GROUPS_CLAIM ? { groupsClaim: env.TURNPIKE_OIDC_GROUPS_CLAIM } : {}),
    ...(env.TURNPIKE_OIDC_TENANT_CLAIM ? { tenantClaim: env.TURNPIKE_OIDC_TENANT_CLAIM } : {}),
  };
}

function isLoopback(url: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The provider's userinfo could not be read: the sign-in is refused rather than missing the claims it holds. */
class UserinfoFailed extends Error {
  constructor(cause: unknown) {
    super(`the identity provider's userinfo could not be read (${cause instanceof Error ? cause.message : String(cause)}); signing in without it would leave out your groups, so sign in again later`, { cause });
  }
}

/** A plain page that says why signing in failed, with a way back. */
function loginFailed(reply: FastifyReply, message: string) {
  return reply
    .status(400)
    .type('text/html; charset=utf-8')
    .send(`<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><p>Signing in failed: ${escapeHtml(message)}</p><p><a href="/">Back to the dashboard</a></p>`);
}

export interface SessionRouteOptions {
  sessions: Sessions;
  authenticate: Authenticator;
  login?: LoginOptions;
}

/** The /auth/ routes: always the session's (token exchange, CSRF, sign-out), and the provider's when `login` is set. */
export async function registerSessionRoutes(app: FastifyInstance, options: SessionRouteOptions): Promise<void> {
  const { sessions } = options;

  app.post('/auth/token', async (request, reply) => {
    const caller = await options.authenticate(request.headers.authorization);
    if (!caller) return reply.status(401).send({ error: { type: 'Unauthorized', message: 'Send Authorization: Bearer <token> with a token this server accepts' } });
    const { csrfToken, expiresAt } = sessions.signIn(request, caller);
    return { identity: caller.identity, groups: caller.groups, csrfToken, expiresAt: new Date(expiresAt).toISOString() };
  });

  app.get('/auth/csrf', async (request, reply) => {
    if (!sessions.caller(request)) return reply.status(401).send({ error: { type: 'Unauthorized', message: 'Not signed in' } });
    return { csrfToken: sessions.csrfToken(request) };
  });

  // Signing out needs no CSRF token: the worst another site can do with it is sign you out.
  app.post('/auth/logout', async (request, reply) => {
    sessions.signOut(request);
    return reply.status(204).send();
  });

  if (options.login) await registerLogin(app, options.login, sessions);
}

async function registerLogin(app: FastifyInstance, login: LoginOptions, sessions: Sessions): Promise<void> {
  const oidc = await importOptional('Signing in with an identity provider (login)', ['openid-client'], () => import('openid-client'));
  const issuer = new URL(login.issuer);
  const redirectUri = new URL(login.redirectUri);
  // Plain http only to a provider on this machine (development and tests).
  const insecure = issuer.protocol === 'http:' && isLoopback(issuer);
  /** The provider's configuration, and the check of its ID tokens' signatures against the keys it publishes. */
  interface Provider {
    config: OpenIdClient.Configuration;
    verifyIdToken: ReturnType<typeof idTokenSignatureVerifier>;
  }
  let provider: Promise<Provider> | undefined;
  const discover = () => {
    provider ??= oidc
      .discovery(
        issuer,
        login.clientId,
        login.clientSecret,
        login.clientSecret ? oidc.ClientSecretBasic(login.clientSecret) : oidc.None(),
        insecure ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .then((config) => {
        const metadata = config.serverMetadata();
        if (!metadata.jwks_uri) throw new Error('the identity provider publishes no jwks_uri: its ID tokens cannot be verified');
        const jwksUri = new URL(metadata.jwks_uri);
        if (jwksUri.protocol !== 'https:' && !(insecure && jwksUri.protocol === 'http:' && isLoopback(jwksUri))) {
          throw new Error(`the identity provider's jwks_uri is not https: ${jwksUri.href}`);
        }
        const verifyIdToken = idTokenSignatureVerifier({
          jwksUri,
          issuer: metadata.issuer,
          clientId: login.clientId,
          ...(metadata.id_token_signing_alg_values_supported ? { algorithms: metadata.id_token_signing_alg_values_supported } : {}),
          ...(login.jwksCooldownSeconds !== undefined ? { cooldownSeconds: login.jwksCooldownSeconds } : {}),
        });
        return { config, verifyIdToken };
      });
    // A provider that was down is asked again on the next sign-in.
    provider.catch(() => (provider = undefined));
    return provider;
  };

  app.get('/auth/login', async (request, reply) => {
    let config: OpenIdClient.Configuration;
    try {
      ({ config } = await discover());
    } catch (error) {
      app.log.error(error);
      return loginFailed(reply, 'the identity provider could not be reached');
    }
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    sessions.setLogin(request, { codeVerifier, state, nonce, startedAt: Date.now() });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: login.redirectUri,
      scope: (login.scopes ?? DEFAULT_SCOPES).join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return reply.redirect(url.href, 302);
  });

  app.get('/auth/callback', async (request, reply) => {
    const pending = sessions.login(request);
    if (!pending || Date.now() - pending.startedAt > LOGIN_TIMEOUT_MS) return loginFailed(reply, 'this sign-in was not started here, or took too long; sign in again');
    // The URL the provider redirected to: the configured callback with this request's query.
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const currentUrl = new URL(`${redirectUri.origin}${redirectUri.pathname}${query}`);
    let caller: Caller | undefined;
    try {
      const { config, verifyIdToken } = await discover();
      // openid-client checks the ID token's claims (issuer, audience, nonce, expiry, alg)…
      const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      // … and its signature is checked here: the claims used are those the provider signed.
      let claims: Record<string, unknown> = { ...(await verifyIdToken(tokens.id_token!)) };
      const groupsClaim = login.groupsClaim ?? 'groups';
      // Providers often keep email and groups out of the ID token: ask userinfo for what is missing.
      // Without its answer the caller would be signed in with fewer rights than they have, so a
      // userinfo that fails (twice) fails the sign-in.
      if ((!(groupsClaim in claims) || (login.identityClaim ? !(login.identityClaim in claims) : !('email' in claims))) && tokens.access_token) {
        const accessToken = tokens.access_token;
        const fetchUserInfo = () => oidc.fetchUserInfo(config, accessToken, claims.sub as string);
        const userinfo = await fetchUserInfo()
          .catch(fetchUserInfo)
          .catch((error: unknown) => {
            throw new UserinfoFailed(error);
          });
        claims = { ...userinfo, ...claims };
      }
      caller = callerFromClaims(claims, login);
    } catch (error) {
      // Whoever this browser was signed in as before, a refused sign-in leaves it signed in as no one.
      sessions.signOut(request);
      request.log.warn({ err: error }, 'sign-in callback refused');
      return loginFailed(reply, error instanceof Error ? error.message : String(error));
    }
    if (!caller) {
      sessions.signOut(request);
      return loginFailed(reply, 'the identity provider named no identity');
    }
    sessions.signIn(request, caller);
    return reply.redirect('/', 302);
  });
}
