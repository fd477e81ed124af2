/**
 * Whether a sign-in's ID token is the identity provider's: its signature is verified against the
 * keys the provider publishes (the `jwks_uri` of its discovery document), with `jose`.
 *
 * `openid-client` checks the ID token's claims (issuer, audience, nonce, expiry, `alg`) but not,
 * for a token from the token endpoint, its signature: that one it leaves to TLS unless
 * `enableNonRepudiationChecks` is on. Its checks would do the same, but with a key cache it fixes
 * (a key missing from a JWKS read less than 60 seconds ago is refused without reading it again,
 * and no setting changes that). `jose`'s remote key set is the one the API already verifies bearer
 * JWTs with (api/auth.ts): it keeps the keys it read (ten minutes), reads them again once when a
 * token names a key it does not hold (the provider rotated its keys), and then refuses that key
 * without reading them again for `cooldownSeconds`, so that tokens with made-up key ids cannot
 * make the API hammer the provider.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';

/** Every asymmetric JWS algorithm `jose` verifies; never `none`, never a shared-secret (`HS*`) one. */
const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** What OpenID Connect Discovery says a provider signs ID tokens with when it does not say. */
const DEFAULT_ALGORITHMS = ['RS256'];
/** The clock skew `openid-client` allows for `exp`, `iat` and `nbf`; the same here so the two agree. */
const CLOCK_TOLERANCE_SECONDS = 30;
export const DEFAULT_JWKS_COOLDOWN_SECONDS = 30;

export interface IdTokenSignatureOptions {
  /** The provider's `jwks_uri`. */
  jwksUri: URL;
  /** The provider's issuer, as its discovery document names it. */
  issuer: string;
  /** This client's id: the ID token's audience. */
  clientId: string;
  /** The provider's `id_token_signing_alg_values_supported`. */
  algorithms?: readonly string[];
  /** After the keys are read, a token signed by a key not among them is refused without reading them again for this long. */
  cooldownSeconds?: number;
}

/** The ID token is not the provider's; its message says why, for the sign-in failed page. */
export class IdTokenSignatureError extends Error {
  override name = 'IdTokenSignatureError';
}

function reason(error: unknown): string {
  if (error instanceof errors.JWKSNoMatchingKey) return 'the ID token is signed with a key the identity provider does not publish';
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the ID token's signature does not verify with the identity provider's key";
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the ID token is signed with an algorithm the identity provider does not use';
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'the ID token names no key id, and the identity provider publishes several keys';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error instanceof TypeError) return "the identity provider's keys could not be read";
  if (error instanceof errors.JOSEError) return `the ID token was refused: ${error.message}`;
  return "the identity provider's keys could not be read";
}

/** A function that returns the ID token's verified claims, or throws {@link IdTokenSignatureError}. */
export function idTokenSignatureVerifier(options: IdTokenSignatureOptions): (idToken: string) => Promise<JWTPayload> {
  const cooldownSeconds = options.cooldownSeconds ?? DEFAULT_JWKS_COOLDOWN_SECONDS;
  if (!(cooldownSeconds >= 0)) throw new Error('jwksCooldownSeconds must be 0 or more seconds');
  const keys = createRemoteJWKSet(options.jwksUri, { cooldownDuration: cooldownSeconds * 1000 });
  const supported = (options.algorithms ?? []).filter((algorithm) => ASYMMETRIC_ALGORITHMS.includes(algorithm));
  const algorithms = supported.length > 0 ? supported : DEFAULT_ALGORITHMS;
  return async (idToken) => {
    try {
      const { payload } = await jwtVerify(idToken, keys, {
        issuer: options.issuer,
        audience: options.clientId,
        algorithms,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      return payload;
    } catch (error) {
      throw new IdTokenSignatureError(reason(error), { cause: error });
    }
  };
}
