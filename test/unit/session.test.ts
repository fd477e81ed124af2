/**
 * The sign-in session without a browser or a provider: its configuration from the environment,
 * the secret's minimum length, the cookie's attributes (Secure only over https), expiry, CSRF on
 * state-changing requests, and a cookie read by a second API instance sharing the secret.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loginOptionsFromEnvironment } from '../../api/login.js';
import { registerSessions } from '../../api/session.js';

const SECRET = 'a-session-secret-of-at-least-32-characters';

async function appWithSessions(options: { secret?: string; maxAgeSeconds?: number } = { secret: SECRET }) {
  const app = Fastify();
  const sessions = await registerSessions(app, options);
  app.post('/sign-in', async (request) => sessions.signIn(request, { identity: 'alice', groups: ['finance'] }));
  app.get('/who', async (request) => sessions.caller(request) ?? null);
  app.post('/change', async (request, reply) => (sessions.csrfOk(request) ? { ok: true } : reply.status(403).send({ ok: false })));
  return app;
}

const cookieOf = (setCookie: string | string[] | undefined) => String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0];

describe('sign-in configuration', () => {
  it('reads TURNPIKE_LOGIN_* and refuses a partial configuration', () => {
    expect(loginOptionsFromEnvironment({})).toBeUndefined();
    expect(
      loginOptionsFromEnvironment({
        TURNPIKE_LOGIN_ISSUER: 'https://idp.example.com',
        TURNPIKE_LOGIN_CLIENT_ID: 'turnpike',
        TURNPIKE_LOGIN_CLIENT_SECRET: 's3cret',
        TURNPIKE_LOGIN_REDIRECT_URI: 'https://turnpike.example.com/auth/callback',
        TURNPIKE_LOGIN_SCOPES: 'openid email  groups',
      }),
    ).toEqual({ issuer: 'https://idp.example.com', clientId: 'turnpike', clientSecret: 's3cret', redirectUri: 'https://turnpike.example.com/auth/callback', scopes: ['openid', 'email', 'groups'] });
    expect(() => loginOptionsFromEnvironment({ TURNPIKE_LOGIN_ISSUER: 'https://idp.example.com' })).toThrow(/TURNPIKE_LOGIN_CLIENT_ID/);
  });

  it('refuses a session secret shorter than 32 characters', async () => {
    await expect(registerSessions(Fastify(), { secret: 'too-short' })).rejects.toThrow(/at least 32/);
  });
});

describe('the session cookie', () => {
  it('is httpOnly and SameSite=Lax, Secure only over https, and read by another instance with the same secret', async () => {
    const app = await appWithSessions();
    const plain = await app.inject({ method: 'POST', url: '/sign-in' });
    expect(plain.headers['set-cookie']).toMatch(/^turnpike_session=[^;]+; Max-Age=28800; Path=\/; HttpOnly; SameSite=Lax$/);
    const https = await app.inject({ method: 'POST', url: '/sign-in', headers: { 'x-forwarded-proto': 'https' } });
    expect(https.headers['set-cookie']).toMatch(/; Secure/);
    expect(plain.json()).not.toHaveProperty('accessToken');

    const other = await appWithSessions();
    const who = await other.inject({ url: '/who', headers: { cookie: cookieOf(plain.headers['set-cookie']) } });
    expect(who.json()).toMatchObject({ identity: 'alice', groups: ['finance'] });
    const stranger = await appWithSessions({ secret: `${SECRET}-other` });
    expect((await stranger.inject({ url: '/who', headers: { cookie: cookieOf(plain.headers['set-cookie']) } })).body).toBe('null');
  });

  it('ends at its expiry', async () => {
    const app = await appWithSessions({ secret: SECRET, maxAgeSeconds: 1 });
    const cookie = cookieOf((await app.inject({ method: 'POST', url: '/sign-in' })).headers['set-cookie']);
    expect((await app.inject({ url: '/who', headers: { cookie } })).json()).toMatchObject({ identity: 'alice' });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await app.inject({ url: '/who', headers: { cookie } })).body).toBe('null');
  });

  it('lets a state-changing request through only with the session CSRF token', async () => {
    const app = await appWithSessions();
    const signedIn = await app.inject({ method: 'POST', url: '/sign-in' });
    const cookie = cookieOf(signedIn.headers['set-cookie']);
    const { csrfToken } = signedIn.json<{ csrfToken: string }>();
    expect((await app.inject({ method: 'POST', url: '/change', headers: { cookie } })).statusCode).toBe(403);
    expect((await app.inject({ method: 'POST', url: '/change', headers: { cookie, 'x-csrf-token': `${csrfToken.slice(1)}x` } })).statusCode).toBe(403);
    expect((await app.inject({ method: 'POST', url: '/change', headers: { cookie, 'x-csrf-token': csrfToken } })).statusCode).toBe(200);
  });
});
