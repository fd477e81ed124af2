/**
 * `verifyA2aPush`: a receiver's check of an A2A push notification's JWT (push-jwt.ts) against the
 * keys the API publishes, fetched with `jose`'s `createRemoteJWKSet` (cached per URL, refetched
 * for a `kid` it does not know, so a rotated key is found). Exported from `turnpike` for
 * receivers written in Node; `jose` (an optional peer) is loaded at the first call.
 *
 * It refuses a token that is missing, not signed by a published key (or with an algorithm turnpike
 * does not sign with), expired or issued more than `maxAgeSeconds` ago, for another audience or
 * issuer than the one asked, whose body hash is not the SHA-256 of the exact body received, whose
 * `taskId` is not the body's (or the one asked), or whose `jti` the receiver says it has seen.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { JWTVerifyGetKey } from 'jose';
import { BODY_HASH_CLAIM, PUSH_JWT_ALGORITHMS, PUSH_JWT_HEADER, PUSH_JWT_LIFETIME_SECONDS, TASK_ID_CLAIM } from './push-jwt-key.js';

/** What `verifyA2aPush` checks: the request as it came, and what the receiver expects of it. */
export interface A2aPushVerification {
  /** The JWKS URL the API publishes (its Agent Card names it): `<API>/api/a2a/.well-known/jwks.json`. */
  jwksUrl: string | URL;
  /** The request's body, exactly as received (bytes or text). */
  body: string | Uint8Array;
  /** The request's headers (any case; a Node `IncomingHttpHeaders` or a fetch `Headers`). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The task the receiver expects; default: any, as long as the token's is the body's. */
  taskId?: string;
  /** The receiver's URL as its push config gave it (the token's `aud`); default: not checked. */
  audience?: string;
  /** How old a token may be, in seconds, whatever its `exp`. Default 300. */
  maxAgeSeconds?: number;
  /**
   * Called with the token's `jti` and expiry (seconds) once everything else holds: answer true
   * when that `jti` was already taken (a replay), and remember it until it expires otherwise.
   */
  seen?: (jti: string, expiresAt: number) => boolean | Promise<boolean>;
  /** Now, in ms (for tests). */
  now?: number;
}

/** `verifyA2aPush`'s answer: the token's task, id, key and times when it holds, else why not. */
export type A2aPushVerdict = { ok: true; taskId: string; jti: string; kid: string; issuedAt: number; expiresAt: number } | { ok: false; reason: string };

const keySets = new Map<string, JWTVerifyGetKey>();

/** The token of a request: `X-Turnpike-Jwt`, else `Authorization: Bearer`. */
function tokenOf(headers: A2aPushVerification['headers']): string | undefined {
  const header = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]);
    return (Array.isArray(value) ? value[0] : value) ?? undefined;
  };
  return header(PUSH_JWT_HEADER) ?? /^Bearer\s+(\S+)$/i.exec(header('authorization') ?? '')?.[1];
}

/** The task id a StreamResponse body names, if any. */
function bodyTaskId(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as Record<string, { taskId?: unknown; id?: unknown } | undefined>;
    const named = body.statusUpdate?.taskId ?? body.artifactUpdate?.taskId ?? body.message?.taskId ?? body.task?.id;
    return typeof named === 'string' ? named : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks an A2A push notification's JWT; `{ ok: false, reason }` for one to answer 401 (turnpike
 * does not retry it). Throws when the check cannot be made (the JWKS could not be fetched): answer
 * that with a 503, and turnpike sends the notification again.
 */
export async function verifyA2aPush({ jwksUrl, body, headers, taskId, audience, maxAgeSeconds = PUSH_JWT_LIFETIME_SECONDS, seen, now = Date.now() }: A2aPushVerification): Promise<A2aPushVerdict> {
  const token = tokenOf(headers);
  if (!token) return { ok: false, reason: 'no token' };
  const { createRemoteJWKSet, jwtVerify, errors } = await import('jose');
  const href = new URL(jwksUrl).href;
  let keys = keySets.get(href);
  if (!keys) keySets.set(href, (keys = createRemoteJWKSet(new URL(href))));
  let verified;
  try {
    verified = await jwtVerify(token, keys, {
      algorithms: [...PUSH_JWT_ALGORITHMS],
      maxTokenAge: maxAgeSeconds,
      requiredClaims: ['iat', 'exp', 'jti', TASK_ID_CLAIM, BODY_HASH_CLAIM],
      currentDate: new Date(now),
      ...(audience !== undefined ? { audience } : {}),
    });
  } catch (error) {
    // The keys could not be had (no answer in 5 s, not a 200, not a JWKS): nothing was checked.
    if (error instanceof errors.JOSEError && ['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC'].includes(error.code)) throw error;
    if (error instanceof errors.JWTExpired) return { ok: false, reason: 'token expired' };
    if (error instanceof errors.JWSSignatureVerificationFailed) return { ok: false, reason: 'signature does not match' };
    if (error instanceof errors.JWKSNoMatchingKey) return { ok: false, reason: 'no published key has its kid' };
    if (error instanceof errors.JOSEError) return { ok: false, reason: `token refused: ${error.message}` };
    throw error;
  }
  const { payload, protectedHeader } = verified;
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const expected = Buffer.from(createHash('sha256').update(text).digest('hex'));
  const given = Buffer.from(String(payload[BODY_HASH_CLAIM]));
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'body hash does not match' };
  const claimed = payload[TASK_ID_CLAIM];
  if (typeof claimed !== 'string' || claimed !== bodyTaskId(text)) return { ok: false, reason: 'taskId does not match the body' };
  if (taskId !== undefined && claimed !== taskId) return { ok: false, reason: 'taskId is not the one expected' };
  if (seen && (await seen(payload.jti!, payload.exp!))) return { ok: false, reason: 'token replayed' };
  return { ok: true, taskId: claimed, jti: payload.jti!, kid: protectedHeader.kid ?? '', issuedAt: payload.iat!, expiresAt: payload.exp! };
}
