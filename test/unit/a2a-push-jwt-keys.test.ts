/**
 * The keys of A2A push notifications' JWTs: the worker's signing key and the API's published
 * keys are read and checked as they are given (a malformed one stops the worker or the API as it
 * starts, with the reason), their algorithm follows from their type, and their default kid is the
 * RFC 7638 thumbprint jose computes.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkedPushPublicKeys, checkedPushSigningKey, pushSigningKeyFromEnvironment } from '../../activities/a2a-push/push-jwt-key.js';
import { signPushJwt } from '../../activities/a2a-push/push-jwt.js';
import { a2aOptionsFromEnvironment } from '../../api/a2a/a2a-agents.js';
import { TurnpikePlugin } from '../../worker/plugin.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecPrivatePem = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const ecPublicJwk = ec.publicKey.export({ format: 'jwk' });
const ed = generateKeyPairSync('ed25519');
const desk = { description: 'Orders', model: { provider: 'scripted', model: 'demo' } };

afterEach(() => vi.unstubAllEnvs());

describe('the signing key', () => {
  it('is a PEM or a private JWK; its algorithm follows from its type, its kid is the one given, the JWK\'s, or the thumbprint jose computes', async () => {
    const fromPem = checkedPushSigningKey({ key: ecPrivatePem }, 'test');
    expect(fromPem.alg).toBe('ES256');
    expect(fromPem.kid).toBe(await calculateJwkThumbprint({ kty: 'EC', crv: ecPublicJwk.crv!, x: ecPublicJwk.x!, y: ecPublicJwk.y! }));
    expect(fromPem.publicJwk).toEqual({ ...ecPublicJwk, kid: fromPem.kid, alg: 'ES256', use: 'sig' });
    expect(fromPem.publicJwk).not.toHaveProperty('d');
    expect(checkedPushSigningKey({ key: ecPrivatePem, kid: 'push-2026-12' }, 'test').kid).toBe('push-2026-12');
    const edJwk = { ...ed.privateKey.export({ format: 'jwk' }), kid: 'ed-1' } as { kty: string; kid: string };
    expect(checkedPushSigningKey({ key: edJwk }, 'test')).toMatchObject({ alg: 'EdDSA', kid: 'ed-1' });
    expect(checkedPushSigningKey({ key: JSON.stringify(edJwk) }, 'test').kid).toBe('ed-1');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(checkedPushSigningKey({ key: rsa }, 'test').alg).toBe('RS256');
  });

  it('signs a token with the claims a receiver binds to: iat, a short exp, a fresh jti, aud, taskId and the body\'s SHA-256', async () => {
    const key = checkedPushSigningKey({ key: ecPrivatePem, kid: 'k1' }, 'test');
    const request = { taskId: 'a2a-desk-1', url: 'https://hooks.example/a2a', body: '{"statusUpdate":{"taskId":"a2a-desk-1"}}', issuedAt: 1_700_000_000 };
    const token = await signPushJwt(key, request);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iat: 1_700_000_000, exp: 1_700_000_300, aud: 'https://hooks.example/a2a', taskId: 'a2a-desk-1' });
    expect(claims.request_body_sha256).toBe(createHash('sha256').update(request.body).digest('hex'));
    expect(decodeJwt(await signPushJwt(key, request)).jti).not.toBe(claims.jti);
  });

  it('refuses a malformed, public, weak or symmetric key, or a JWK whose alg is not its key\'s, with where it came from and why', () => {
    expect(() => checkedPushSigningKey({ key: 'not a key' }, 'W')).toThrow(/^W: it is not a PKCS#8 PEM private key or a private JWK/);
    expect(() => checkedPushSigningKey({ key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' }, 'W')).toThrow(/^W: it is not a PKCS#8 PEM/);
    expect(() => checkedPushSigningKey({ key: '{"kty": "EC",' }, 'W')).toThrow(/^W: it starts with "\{" but is not JSON/);
    expect(() => checkedPushSigningKey({ key: { ...ecPublicJwk, kty: 'EC' } }, 'W')).toThrow(/^W: it is a public key: the worker signs with the private one/);
    expect(() => checkedPushSigningKey({ key: { kty: 'oct', k: 'c2VjcmV0', d: 'x' } }, 'W')).toThrow(/^W: /);
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => checkedPushSigningKey({ key: weak }, 'W')).toThrow(/^W: an RSA key must have 2048 bits or more \(this one has 1024\)/);
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => checkedPushSigningKey({ key: k1 }, 'W')).toThrow(/^W: an EC key must be on P-256, P-384 or P-521/);
    expect(() => checkedPushSigningKey({ key: { ...ec.privateKey.export({ format: 'jwk' }), kty: 'EC', alg: 'RS256' } }, 'W')).toThrow(/^W: the JWK says "alg": "RS256", but its key signs ES256/);
    expect(() => checkedPushSigningKey({ key: ecPrivatePem, kid: 'has space' }, 'W')).toThrow(/^W: the kid "has space"/);
  });

  it('stops a worker as its plugin is made, from the option or from TURNPIKE_A2A_PUSH_SIGNING_KEY, before it polls', () => {
    expect(() => new TurnpikePlugin({ a2aPushSigningKey: { key: 'garbage' } })).toThrow(/^TurnpikePlugin a2aPushSigningKey: it is not a PKCS#8 PEM/);
    vi.stubEnv('TURNPIKE_A2A_PUSH_SIGNING_KEY', '-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----');
    expect(() => new TurnpikePlugin()).toThrow(/^TURNPIKE_A2A_PUSH_SIGNING_KEY: it is not a PKCS#8 PEM/);
    // A PEM on one line, its line breaks written \n, with a kid of its own.
    vi.stubEnv('TURNPIKE_A2A_PUSH_SIGNING_KEY', ecPrivatePem.replace(/\n/g, '\\n'));
    vi.stubEnv('TURNPIKE_A2A_PUSH_SIGNING_KID', 'env-kid');
    expect(pushSigningKeyFromEnvironment()).toEqual({ key: ecPrivatePem.trim(), kid: 'env-kid' });
    expect(() => new TurnpikePlugin()).not.toThrow();
  });
});

describe('the published keys', () => {
  it('are public keys under distinct kids; a private or symmetric key, or a kid twice, is refused as the API starts', () => {
    const published = checkedPushPublicKeys([{ ...ecPublicJwk, kty: 'EC', kid: 'old' }, ec.publicKey.export({ format: 'pem', type: 'spki' }).toString()], 'a2a.pushKeys');
    expect(published.map((key) => key.kid)).toEqual(['old', checkedPushSigningKey({ key: ecPrivatePem }, 'test').kid]);
    expect(published.every((key) => !('d' in key.publicJwk) && key.privateKey === undefined)).toBe(true);
    expect(() => checkedPushPublicKeys([{ ...ec.privateKey.export({ format: 'jwk' }), kty: 'EC' }], 'a2a.pushKeys')).toThrow(/^a2a\.pushKeys\[0\]: it is a private key: give only its public part/);
    expect(() => checkedPushPublicKeys([{ kty: 'oct', k: 'c2VjcmV0' }], 'a2a.pushKeys')).toThrow(/^a2a\.pushKeys\[0\]: /);
    expect(() => checkedPushPublicKeys([ecPrivatePem], 'a2a.pushKeys')).toThrow(/^a2a\.pushKeys\[0\]: /);
    expect(() => checkedPushPublicKeys([{ ...ecPublicJwk, kty: 'EC', kid: 'same' }, { ...ed.publicKey.export({ format: 'jwk' }), kty: 'OKP', kid: 'same' }], 'a2a.pushKeys')).toThrow(/two keys have the kid "same"/);
  });

  it('are read from TURNPIKE_A2A_PUSH_JWKS by npm run api, and refused with the reason', () => {
    const jwks = JSON.stringify({ keys: [{ ...ecPublicJwk, kid: 'k1' }] });
    expect(a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }), TURNPIKE_A2A_PUSH_JWKS: jwks })?.pushKeys).toEqual([{ ...ecPublicJwk, kid: 'k1' }]);
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }), TURNPIKE_A2A_PUSH_JWKS: '{keys' })).toThrow(/TURNPIKE_A2A_PUSH_JWKS: not JSON/);
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }), TURNPIKE_A2A_PUSH_JWKS: JSON.stringify({ keys: [{ ...ec.privateKey.export({ format: 'jwk' }) }] }) })).toThrow(/a2a\.pushKeys\[0\]: it is a private key/);
  });
});
