/**
 * The JWT of one A2A push notification request, signed with the worker's key (push-jwt-key.ts) by
 * `jose`, as A2A's push notification security asks of a server: the receiver checks it against the
 * public keys the API publishes (`GET /api/a2a/.well-known/jwks.json`), with no secret shared.
 *
 * Header: `alg`, `kid`, `typ: JWT`. Claims: `iat`, `exp` ({@link PUSH_JWT_LIFETIME_SECONDS} later),
 * a fresh `jti` (a UUID), `aud` (the receiver's URL as its config gave it), `taskId`, and
 * `request_body_sha256`, the SHA-256 (hex) of the exact body: the token holds for that body and
 * no other. Each request, a retry included, is signed anew (a new `jti` and `iat`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { BODY_HASH_CLAIM, PUSH_JWT_LIFETIME_SECONDS, TASK_ID_CLAIM, type CheckedPushKey } from './push-jwt-key.js';

export interface PushJwtRequest {
  taskId: string;
  /** The receiver's URL, the token's audience. */
  url: string;
  /** The exact body sent. */
  body: string;
  /** Seconds since the epoch. */
  issuedAt: number;
}

/** A compact JWS for one request. */
export async function signPushJwt(key: CheckedPushKey & { privateKey: NonNullable<CheckedPushKey['privateKey']> }, { taskId, url, body, issuedAt }: PushJwtRequest): Promise<string> {
  return new SignJWT({ [TASK_ID_CLAIM]: taskId, [BODY_HASH_CLAIM]: createHash('sha256').update(body).digest('hex') })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + PUSH_JWT_LIFETIME_SECONDS)
    .setJti(randomUUID())
    .setAudience(url)
    .sign(key.privateKey);
}
