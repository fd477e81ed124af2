/**
 * The public keys of A2A push notifications' JWTs (activities/a2a-push/push-jwt.ts), published by
 * the API as a JWKS at {@link A2A_PUSH_JWKS_PATH} (public, as Agent Cards are) and named in each
 * Agent Card by the extension {@link A2A_PUSH_JWT_EXTENSION}, whose `params.jwksUrl` is that URL.
 *
 * The workers sign; the API never holds a private key: it is given the public keys
 * (`A2aOptions.pushKeys`, or `TURNPIKE_A2A_PUSH_JWKS`), checked as it starts. Several keys may be
 * published at once (a rotation: the new key beside the old one while workers change keys).
 */
import { checkedPushPublicKeys, PUSH_JWT_ALGORITHMS, PUSH_JWT_HEADER, type A2aPushJwk, type CheckedPushKey } from '../../activities/a2a-push/push-jwt-key.js';

/** Where the API publishes the push notifications' public keys (under `A2A_BASE_PATH`). */
export const A2A_PUSH_JWKS_PATH = '/api/a2a/.well-known/jwks.json';
/** The Agent Card extension that says notifications carry a JWT, and where its keys are. */
export const A2A_PUSH_JWT_EXTENSION = 'urn:turnpike:a2a:push-jwt:v1';

/** The JWKS document: each key's public members with its `kid`, `alg` and `use: 'sig'`. */
export function pushJwks(keys: readonly CheckedPushKey[]): { keys: Array<CheckedPushKey['publicJwk']> } {
  return { keys: keys.map((key) => key.publicJwk) };
}

/** The Agent Card's extension naming the JWKS, for an API reached at `base`. */
export function pushJwtExtension(base: string) {
  return {
    uri: A2A_PUSH_JWT_EXTENSION,
    description: `Each push notification carries a JWT (header ${PUSH_JWT_HEADER}, and Authorization: Bearer when the config has no authentication) over the SHA-256 of its body, signed with a key of this JWKS`,
    required: false,
    params: { jwksUrl: `${base}${A2A_PUSH_JWKS_PATH}`, header: PUSH_JWT_HEADER, algorithms: [...PUSH_JWT_ALGORITHMS] },
  };
}

/** The keys as `A2aOptions.pushKeys` gives them, checked; a bad one throws with the reason. */
export function checkedPushKeys(keys: ReadonlyArray<string | A2aPushJwk> | undefined, where: string): CheckedPushKey[] {
  return checkedPushPublicKeys(keys ?? [], where);
}

/** `TURNPIKE_A2A_PUSH_JWKS`: a JWKS (`{"keys": [...]}`) or an array of public JWKs, as JSON; undefined when unset. */
export function pushKeysFromEnvironment(env: NodeJS.ProcessEnv = process.env): A2aPushJwk[] | undefined {
  const text = env.TURNPIKE_A2A_PUSH_JWKS?.trim();
  if (!text) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new TypeError('TURNPIKE_A2A_PUSH_JWKS: not JSON (give a JWKS, {"keys": [...]}, of public keys)');
  }
  const keys = Array.isArray(parsed) ? parsed : (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new TypeError('TURNPIKE_A2A_PUSH_JWKS: give a JWKS, {"keys": [...]}, or an array of public JWKs');
  return keys as A2aPushJwk[];
}
