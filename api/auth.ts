/**
 * Who is calling the HTTP API. Decisions carry the approver identity from the request's
 * bearer token, never from the body, so a browser cannot decide in someone else's name.
 *
 * Two kinds of bearer token: JWTs from the organisation's identity provider (OIDC: verified
 * against its JWKS, issuer and audience with `jose`), and static tokens for development.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/** The authenticated caller: the approver identity decisions carry, and the groups it belongs to. */
export interface Caller {
  identity: string;
  groups: readonly string[];
  /**
   * The tenant the caller is bound to (a claim the operator names, or the identity's entry in
   * `TURNPIKE_API_TENANTS`): what it starts runs for this tenant, and it sees only this tenant's
   * turns. Undefined for a caller bound to none (docs/http-api.md, "Tenants").
   */
  tenant?: string;
}

/** Resolves an `Authorization` header to a caller, or undefined (401). Never throws for a bad token. */
export type Authenticator = (authorization: string | undefined) => Promise<Caller | undefined>;

export interface OidcOptions {
  /** The identity provider's JWKS, e.g. `https://idp.example.com/.well-known/jwks.json`. */
  jwksUrl: string;
  /** The `iss` every token must carry. */
  issuer: string;
  /** The `aud` a token must carry (one of them). */
  audience: string | string[];
  /** Claim holding the approver identity. Default `email`, else `sub`. */
  identityClaim?: string;
  /** Claim holding the caller's groups (a list, or a space-separated string). Default `groups`. */
  groupsClaim?: string;
  /** Claim holding the caller's tenant (docs/http-api.md, "Tenants"); none by default. */
  tenantClaim?: string;
  /** Accepted signature algorithms. Default RS256, PS256, ES256, EdDSA — never `none`. */
  algorithms?: string[];
  /** Leeway for `exp`/`nbf`, in seconds. Default 30. */
  clockToleranceSeconds?: number;
}

/**
 * `TURNPIKE_OIDC_JWKS_URL`, `TURNPIKE_OIDC_ISSUER`, `TURNPIKE_OIDC_AUDIENCE` (comma-separated),
 * optional `TURNPIKE_OIDC_IDENTITY_CLAIM`, `TURNPIKE_OIDC_GROUPS_CLAIM`; undefined when unset.
 */
export function oidcOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): OidcOptions | undefined {
  const { TURNPIKE_OIDC_JWKS_URL: jwksUrl, TURNPIKE_OIDC_ISSUER: issuer, TURNPIKE_OIDC_AUDIENCE: audience } = env;
  if (!jwksUrl && !issuer && !audience) return undefined;
  if (!jwksUrl || !issuer || !audience) {
    throw new Error('Set all of TURNPIKE_OIDC_JWKS_URL, TURNPIKE_OIDC_ISSUER and TURNPIKE_OIDC_AUDIENCE to accept tokens from an identity provider');
  }
  return {
    jwksUrl,
    issuer,
    audience: audience.split(',').map((part) => part.trim()).filter(Boolean),
    ...(env.TURNPIKE_OIDC_IDENTITY_CLAIM ? { identityClaim: env.TURNPIKE_OIDC_IDENTITY_CLAIM } : {}),
    ...(env.TURNPIKE_OIDC_GROUPS_CLAIM ? { groupsClaim: env.TURNPIKE_OIDC_GROUPS_CLAIM } : {}),
    ...(env.TURNPIKE_OIDC_TENANT_CLAIM ? { tenantClaim: env.TURNPIKE_OIDC_TENANT_CLAIM } : {}),
  };
}

function claimText(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function claimList(payload: JWTPayload, claim: string): string[] {
  const value = payload[claim];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return typeof value === 'string' ? value.split(' ').filter(Boolean) : [];
}

/**
 * The caller a verified token's claims name: identity from `identityClaim`, else `email`, else
 * `sub`; groups from `groupsClaim` (default `groups`); the tenant from `tenantClaim` when the
 * operator names one. Shared by bearer JWTs and the sign-in flow.
 */
export function callerFromClaims(payload: JWTPayload, options: { identityClaim?: string; groupsClaim?: string; tenantClaim?: string } = {}): Caller | undefined {
  const identity = options.identityClaim ? claimText(payload, options.identityClaim) : (claimText(payload, 'email') ?? claimText(payload, 'sub'));
  if (!identity) return undefined;
  const tenant = options.tenantClaim ? claimText(payload, options.tenantClaim) : undefined;
  return { identity, groups: claimList(payload, options.groupsClaim ?? 'groups'), ...(tenant ? { tenant } : {}) };
}

/** Verifies JWT bearer tokens against the identity provider's keys (fetched and cached by jose). */
export function oidcAuthenticator(options: OidcOptions): Authenticator {
  const keys = createRemoteJWKSet(new URL(options.jwksUrl));
  const algorithms = options.algorithms ?? ['RS256', 'PS256', 'ES256', 'EdDSA'];
  return async (authorization) => {
    const token = bearer(authorization);
    if (!token || token.split('.').length !== 3) return undefined;
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms,
        clockTolerance: options.clockToleranceSeconds ?? 30,
        requiredClaims: ['exp'],
      });
      return callerFromClaims(payload, options);
    } catch {
      // Expired, wrong issuer or audience, unknown key, bad signature, `alg: none`: all 401.
      return undefined;
    }
  };
}

/** Static `token → identity` pairs, for development and service accounts; no groups. */
export function staticTokenAuthenticator(tokens: Map<string, string>): Authenticator {
  return async (authorization) => {
    const identity = identify(tokens, authorization);
    return identity ? { identity, groups: [] } : undefined;
  };
}

/** The first authenticator that recognises the token decides. */
export function anyOf(...authenticators: Authenticator[]): Authenticator {
  return async (authorization) => {
    for (const authenticate of authenticators) {
      const caller = await authenticate(authorization);
      if (caller) return caller;
    }
    return undefined;
  };
}

function bearer(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
}

/** `TURNPIKE_API_TOKENS="token1:alice,token2:bob"` → token → approver identity. */
export function parseTokenMap(value: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const entry of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const separator = entry.lastIndexOf(':');
    if (separator <= 0 || separator === entry.length - 1) {
      throw new Error(`TURNPIKE_API_TOKENS entries look like token:identity (got "${entry.slice(0, 4)}…")`);
    }
    tokens.set(entry.slice(0, separator), entry.slice(separator + 1));
  }
  return tokens;
}

/** `TURNPIKE_API_TENANTS="alice:acme,bob:globex"` → identity → the tenant it is bound to. */
export function parseTenantMap(value: string | undefined): Map<string, string> {
  const tenants = new Map<string, string>();
  for (const entry of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const separator = entry.lastIndexOf(':');
    if (separator <= 0 || separator === entry.length - 1) throw new Error(`TURNPIKE_API_TENANTS entries look like identity:tenant (got "${entry}")`);
    tenants.set(entry.slice(0, separator), entry.slice(separator + 1));
  }
  return tenants;
}

/** The identity behind `Authorization: Bearer <token>`, or undefined. */
export function identify(tokens: Map<string, string>, authorization: string | undefined): string | undefined {
  const token = bearer(authorization);
  if (!token) return undefined;
  const presented = Buffer.from(token);
  for (const [token, identity] of tokens) {
    const known = Buffer.from(token);
    if (known.length === presented.length && timingSafeEqual(known, presented)) return identity;
  }
  return undefined;
}

/**
 * Signed decision tokens: when the server has a secret, it gives each approval it lists a token
 * that binds the turn, the approval, the exact input shown (its hash) and the approver it was
 * shown to; a decision must bring that token back. A browser can neither forge one for another
 * approval or input nor use one issued to someone else.
 */
export interface DecisionSubject {
  turnId: string;
  approvalId: string;
  inputHash: string;
  approver: string;
}

function canonical(subject: DecisionSubject): string {
  return [subject.turnId, subject.approvalId, subject.inputHash, subject.approver].map((part) => `${part.length}:${part}`).join('|');
}

export function signDecision(secret: string, subject: DecisionSubject): string {
  return createHmac('sha256', secret).update(canonical(subject)).digest('base64url');
}

export function verifyDecision(secret: string, subject: DecisionSubject, token: string): boolean {
  const expected = Buffer.from(signDecision(secret, subject));
  const presented = Buffer.from(token);
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}
