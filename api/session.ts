/**
 * The dashboard's sign-in session: an encrypted, stateless cookie (`@fastify/secure-session`,
 * libsodium secretbox) holding only `{ identity, groups, expiresAt }` and a CSRF token — never the
 * identity provider's tokens. Any API instance with the same secret reads it.
 *
 * The cookie is httpOnly, SameSite=Lax, `Secure` when the request came over https (directly or
 * through a proxy's `X-Forwarded-Proto`), and lasts `maxAgeSeconds` (default 8 hours). A session
 * past its `expiresAt` is no session: the API answers 401.
 *
 * CSRF: a request authenticated by the cookie that changes something (POST, PUT, PATCH, DELETE)
 * must carry the session's token in `x-csrf-token` (served by `GET /api/me` and `GET /auth/csrf`);
 * a page on another origin cannot read it, so its form posts and `fetch`es are refused (403).
 * Requests with `Authorization: Bearer` need none: a browser never adds that header by itself.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import secureSession from '@fastify/secure-session';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from './auth.js';

/** How long a sign-in lasts by default: a working day. */
export const DEFAULT_SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;
const COOKIE_NAME = 'turnpike_session';
const MINIMUM_SECRET_LENGTH = 32;

export interface SignedIn extends Caller {
  /** Epoch milliseconds after which the session is refused. */
  expiresAt: number;
}

/** What the cookie holds, besides the CSRF token: the caller, and an authorization request under way. */
export interface LoginInProgress {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Epoch milliseconds; a callback after this starts over. */
  startedAt: number;
}

declare module '@fastify/secure-session' {
  interface SessionData {
    caller: SignedIn;
    csrf: string;
    login: LoginInProgress;
  }
}

export interface SessionOptions {
  /** At least 32 characters; the same on every instance. Random per process when omitted. */
  secret?: string;
  maxAgeSeconds?: number;
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface Sessions {
  maxAgeSeconds: number;
  /** The signed-in caller of the request's cookie, unless there is none or it expired. */
  caller(request: FastifyRequest): SignedIn | undefined;
  /** Starts a session for `caller` (replacing any) and returns its CSRF token. */
  signIn(request: FastifyRequest, caller: Caller): { csrfToken: string; expiresAt: number };
  signOut(request: FastifyRequest): void;
  /** The session's CSRF token (made on first use). */
  csrfToken(request: FastifyRequest): string;
  /** Whether a cookie-authenticated request may go on: safe methods always, others with the session's token. */
  csrfOk(request: FastifyRequest): boolean;
  /** Keeps `login` (the authorization request under way) in the cookie, or clears it. */
  setLogin(request: FastifyRequest, login: LoginInProgress | undefined): void;
  login(request: FastifyRequest): LoginInProgress | undefined;
}

function isHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return request.protocol === 'https' || proto === 'https';
}

/** Registers the session cookie on `app` (before any route or hook that reads it). */
export async function registerSessions(app: FastifyInstance, options: SessionOptions = {}): Promise<Sessions> {
  if (options.secret !== undefined && options.secret.length < MINIMUM_SECRET_LENGTH) {
    throw new Error(`The session secret (TURNPIKE_SESSION_SECRET) needs at least ${MINIMUM_SECRET_LENGTH} characters`);
  }
  const maxAgeSeconds = options.maxAgeSeconds ?? DEFAULT_SESSION_MAX_AGE_SECONDS;
  if (!(maxAgeSeconds > 0)) throw new Error('sessionMaxAge must be a positive number of seconds');
  // secretbox takes a 32-byte key: a hash of the configured secret, or random bytes.
  const key = options.secret ? createHash('sha256').update(`turnpike-session\0${options.secret}`).digest() : randomBytes(32);
  await app.register(secureSession, {
    key,
    cookieName: COOKIE_NAME,
    expiry: maxAgeSeconds,
    cookie: { path: '/', httpOnly: true, sameSite: 'lax' },
  });

  /** Every cookie this response sets: Secure on https, with the session's lifetime. */
  const cookieOptions = (request: FastifyRequest) =>
    request.session.options({ path: '/', httpOnly: true, sameSite: 'lax', secure: isHttps(request), maxAge: maxAgeSeconds });

  const sessions: Sessions = {
    maxAgeSeconds,
    caller(request) {
      const caller = request.session?.get('caller');
      if (!caller) return undefined;
      if (!(caller.expiresAt > Date.now())) return undefined;
      return caller;
    },
    signIn(request, caller) {
      const expiresAt = Date.now() + maxAgeSeconds * 1000;
      const csrfToken = randomBytes(32).toString('base64url');
      cookieOptions(request);
      request.session.set('login', undefined);
      request.session.set('caller', { identity: caller.identity, groups: [...caller.groups], ...(caller.tenant !== undefined ? { tenant: caller.tenant } : {}), expiresAt });
      request.session.set('csrf', csrfToken);
      return { csrfToken, expiresAt };
    },
    signOut(request) {
      cookieOptions(request);
      request.session.delete();
    },
    csrfToken(request) {
      let token = request.session.get('csrf');
      if (!token) {
        token = randomBytes(32).toString('base64url');
        cookieOptions(request);
        request.session.set('csrf', token);
      }
      return token;
    },
    csrfOk(request) {
      if (!UNSAFE_METHODS.has(request.method)) return true;
      const expected = request.session.get('csrf');
      const header = request.headers['x-csrf-token'];
      const presented = Array.isArray(header) ? header[0] : header;
      if (!expected || !presented) return false;
      const a = Buffer.from(expected);
      const b = Buffer.from(presented);
      return a.length === b.length && timingSafeEqual(a, b);
    },
    setLogin(request, login) {
      cookieOptions(request);
      request.session.set('login', login);
    },
    login(request) {
      return request.session.get('login');
    },
  };
  return sessions;
}
