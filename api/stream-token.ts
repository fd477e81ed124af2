/**
 * Stream tokens: a browser's `EventSource` cannot send an `Authorization` header, so it opens
 * an event stream with a short-lived token in the URL instead. An authenticated `POST` issues
 * the token; it is a JWT (HS256, `jose`) signed with the server's stream secret, scoped to one
 * turn or one conversation and to the caller it was issued to, and it expires after
 * {@link STREAM_TOKEN_TTL_SECONDS}. It is checked when a stream opens (or reopens); a stream
 * already open is not cut when the token expires. A leaked token reads one stream for a
 * minute or two and can do nothing else: every other route still wants the bearer token.
 */
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

export const STREAM_TOKEN_TTL_SECONDS = 120;
const AUDIENCE = 'turnpike-stream';
const ISSUER = 'turnpike';

/** `approvals`: the caller's parked-call listing (target `approvals`). */
export type StreamScope = 'turn' | 'conversation' | 'approvals';

export interface StreamTokenClaims {
  scope: StreamScope;
  /** The turn's or the conversation's workflow id. */
  target: string;
  /** The caller the token was issued to. */
  identity: string;
  /** The caller's groups, for a stream that filters by them (the approvals listing). */
  groups?: readonly string[];
  /** The caller's tenant, for a stream that filters by it (the approvals listing). */
  tenant?: string;
}

export class StreamTokens {
  private readonly key: Uint8Array;

  /** `secret`: at least 32 characters; shared by every API instance behind one load balancer. Random when omitted. */
  constructor(secret?: string) {
    if (secret !== undefined && secret.length < 32) throw new Error('The stream token secret (TURNPIKE_STREAM_SECRET) must be at least 32 characters');
    this.key = secret !== undefined ? new TextEncoder().encode(secret) : randomBytes(32);
  }

  async issue(claims: StreamTokenClaims, now = Date.now()): Promise<{ token: string; expiresAt: string }> {
    const expires = Math.floor(now / 1000) + STREAM_TOKEN_TTL_SECONDS;
    const token = await new SignJWT({ scope: claims.scope, target: claims.target, ...(claims.groups && claims.groups.length > 0 ? { groups: [...claims.groups] } : {}), ...(claims.tenant !== undefined ? { tenant: claims.tenant } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.identity)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(expires)
      .sign(this.key);
    return { token, expiresAt: new Date(expires * 1000).toISOString() };
  }

  /** The caller, when `token` is valid for exactly this stream; undefined otherwise (never throws). */
  async verify(token: string, scope: StreamScope, target: string): Promise<string | undefined> {
    return (await this.verifyCaller(token, scope, target))?.identity;
  }

  /** The caller and their groups, when `token` is valid for exactly this stream; undefined otherwise (never throws). */
  async verifyCaller(token: string, scope: StreamScope, target: string): Promise<{ identity: string; groups: string[]; tenant?: string } | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], audience: AUDIENCE, issuer: ISSUER, requiredClaims: ['exp', 'sub'] });
      if (payload.scope !== scope || payload.target !== target || !payload.sub) return undefined;
      const groups = Array.isArray(payload.groups) ? payload.groups.filter((group): group is string => typeof group === 'string') : [];
      return { identity: payload.sub, groups, ...(typeof payload.tenant === 'string' ? { tenant: payload.tenant } : {}) };
    } catch {
      return undefined;
    }
  }
}
