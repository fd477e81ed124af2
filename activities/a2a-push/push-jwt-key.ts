/**
 * The keys of the JWT an A2A push notification carries beside its HMAC signature (push-jwt.ts
 * signs, push-jwt-verify.ts checks, the API publishes the public keys: api/a2a/a2a-push-jwks.ts).
 * Read with node:crypto alone, synchronously, so that a malformed key stops a worker or an API as
 * it starts, not at its first notification, and so that nothing here needs the optional `jose`.
 *
 * A key is a PEM (PKCS#8 private or SPKI public) or a JWK. Its algorithm follows from its type:
 * EC P-256 ES256, P-384 ES384, P-521 ES512, RSA (2048 bits or more) RS256, Ed25519 EdDSA. Its
 * `kid` is the one given, else the JWK's own, else its RFC 7638 thumbprint (SHA-256, base64url).
 */
import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';

/** The header carrying the JWT on every notification (and `Authorization: Bearer` when the config has no `authentication`). */
export const PUSH_JWT_HEADER = 'x-turnpike-jwt';
/** The claim holding the SHA-256 (hex) of the exact body, as in A2A's samples. */
export const BODY_HASH_CLAIM = 'request_body_sha256';
/** The claim holding the task id, as A2A's example flow names it. */
export const TASK_ID_CLAIM = 'taskId';
/** How long a token is good for: a retry signs again. */
export const PUSH_JWT_LIFETIME_SECONDS = 300;
/** The algorithms turnpike signs with, and the only ones `verifyA2aPush` accepts. */
export const PUSH_JWT_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'EdDSA'] as const;
export type PushJwtAlgorithm = (typeof PUSH_JWT_ALGORITHMS)[number];

/** A JSON Web Key (RFC 7517), as parsed JSON. */
export interface A2aPushJwk {
  /** `EC`, `RSA` or `OKP` (Ed25519). */
  readonly kty: string;
  /** The key's id, which the tokens' header names; default its RFC 7638 thumbprint. */
  readonly kid?: string;
  /** The key's other members (`crv`, `x`, `y`, `n`, `e`; `d` and the rest for a private key). */
  readonly [member: string]: unknown;
}

/** The worker's signing key: a PKCS#8 PEM or a private JWK, and the `kid` its tokens name. */
export interface A2aPushSigningKey {
  /** A PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), or a private JWK as an object or as JSON. */
  key: string | A2aPushJwk;
  /** Default: the JWK's `kid`, else the public key's RFC 7638 thumbprint. */
  kid?: string;
}

/** A key read and checked: the private one (signing) or none (publishing), and what is published. */
export interface CheckedPushKey {
  kid: string;
  alg: PushJwtAlgorithm;
  /** The public JWK as the JWKS shows it (`kid`, `alg`, `use: 'sig'`). */
  publicJwk: JsonWebKey & { kid: string; alg: PushJwtAlgorithm; use: 'sig' };
  privateKey?: KeyObject;
}

const KID = /^[\x21-\x7e]{1,128}$/;

function algorithmOf(key: KeyObject, where: string): PushJwtAlgorithm {
  const details = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'ec':
      if (details?.namedCurve === 'prime256v1') return 'ES256';
      if (details?.namedCurve === 'secp384r1') return 'ES384';
      if (details?.namedCurve === 'secp521r1') return 'ES512';
      throw new TypeError(`${where}: an EC key must be on P-256, P-384 or P-521 (this one is on ${details?.namedCurve ?? 'an unknown curve'})`);
    case 'rsa':
      if ((details?.modulusLength ?? 0) < 2048) throw new TypeError(`${where}: an RSA key must have 2048 bits or more (this one has ${details?.modulusLength ?? 0})`);
      return 'RS256';
    case 'ed25519':
      return 'EdDSA';
    default:
      throw new TypeError(`${where}: a ${key.asymmetricKeyType ?? 'symmetric'} key cannot sign A2A push JWTs (use EC P-256/384/521, RSA or Ed25519)`);
  }
}

/** RFC 7638: SHA-256 over the key's required members, in order, as compact JSON. */
function thumbprint(jwk: JsonWebKey): string {
  const members = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : jwk.kty === 'RSA' ? ['e', 'kty', 'n'] : ['crv', 'kty', 'x'];
  const canonical = JSON.stringify(Object.fromEntries(members.map((member) => [member, jwk[member as keyof JsonWebKey]])));
  return createHash('sha256').update(canonical).digest('base64url');
}

/** A JWK given as JSON text, parsed; a PEM or a JWK object as it is. */
function given(key: string | A2aPushJwk, where: string): string | A2aPushJwk {
  return typeof key === 'string' && key.trim().startsWith('{') ? tryJson(key, where) : key;
}

function parsed(jwk: string | A2aPushJwk, where: string, want: 'private' | 'public'): KeyObject {
  try {
    if (typeof jwk === 'string') {
      if (!jwk.includes('-----BEGIN')) throw new Error('not a PEM');
      // Node would derive the public key from a private PEM: the API is not to hold one.
      if (want === 'public' && jwk.includes('PRIVATE KEY-----')) throw new TypeError('it is a private key: give only its public part (an SPKI PEM)');
      return want === 'private' ? createPrivateKey(jwk) : createPublicKey(jwk);
    }
    if (typeof jwk !== 'object' || jwk === null || typeof jwk.kty !== 'string') throw new Error('not a JWK (no "kty")');
    const isPrivate = 'd' in jwk;
    if (want === 'public' && isPrivate) throw new TypeError('it is a private key: give only its public part (without "d")');
    if (want === 'private' && !isPrivate) throw new TypeError('it is a public key: the worker signs with the private one');
    return want === 'private' ? createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }) : createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch (error) {
    const reason = error instanceof TypeError && error.message.startsWith('it is') ? error.message : `it is not a ${want === 'private' ? 'PKCS#8 PEM private key or a private JWK' : 'SPKI PEM public key or a public JWK'} (${(error as Error).message})`;
    throw new TypeError(`${where}: ${reason}`, { cause: error });
  }
}

function tryJson(text: string, where: string): A2aPushJwk {
  try {
    return JSON.parse(text) as A2aPushJwk;
  } catch {
    throw new TypeError(`${where}: it starts with "{" but is not JSON (a JWK)`);
  }
}

function checked(key: KeyObject, source: string | A2aPushJwk, kid: string | undefined, where: string): CheckedPushKey {
  const alg = algorithmOf(key, where);
  const jwkAlg = typeof source === 'object' ? source.alg : undefined;
  if (jwkAlg !== undefined && jwkAlg !== alg) throw new TypeError(`${where}: the JWK says "alg": ${JSON.stringify(jwkAlg)}, but its key signs ${alg}`);
  const exported = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  const chosen = kid ?? (typeof source === 'object' && typeof source.kid === 'string' ? source.kid : undefined) ?? thumbprint(exported);
  if (!KID.test(chosen)) throw new TypeError(`${where}: the kid ${JSON.stringify(chosen)} must be 1 to 128 printable ASCII characters without spaces`);
  return { kid: chosen, alg, publicJwk: { ...exported, kid: chosen, alg, use: 'sig' }, ...(key.type === 'private' ? { privateKey: key } : {}) };
}

/** The worker's signing key, checked (and `jose` found, which signs): a bad one throws with `where` and the reason. */
export function checkedPushSigningKey(options: A2aPushSigningKey, where: string): CheckedPushKey & { privateKey: KeyObject } {
  const read = given(options.key, where);
  const key = checked(parsed(read, where, 'private'), read, options.kid, where);
  try {
    createRequire(import.meta.url).resolve('jose');
  } catch {
    throw new TypeError(`${where}: signing A2A push notifications needs the optional peer jose (npm install jose@^6.2.17)`);
  }
  return key as CheckedPushKey & { privateKey: KeyObject };
}

/** Public keys to publish, checked: no private key, no symmetric key, no kid twice. */
export function checkedPushPublicKeys(keys: ReadonlyArray<string | A2aPushJwk>, where: string): CheckedPushKey[] {
  const checkedKeys = keys.map((key, index) => {
    const read = given(key, `${where}[${index}]`);
    return checked(parsed(read, `${where}[${index}]`, 'public'), read, undefined, `${where}[${index}]`);
  });
  const kids = checkedKeys.map((key) => key.kid);
  const twice = kids.find((kid, index) => kids.indexOf(kid) !== index);
  if (twice !== undefined) throw new TypeError(`${where}: two keys have the kid ${JSON.stringify(twice)}`);
  return checkedKeys;
}

/** `TURNPIKE_A2A_PUSH_SIGNING_KEY` (a PEM or a JWK as JSON) and `TURNPIKE_A2A_PUSH_SIGNING_KID`; undefined when unset. */
export function pushSigningKeyFromEnvironment(env: NodeJS.ProcessEnv = process.env): A2aPushSigningKey | undefined {
  // A PEM written on one line with `\n` for its line breaks is read as the PEM.
  const key = env.TURNPIKE_A2A_PUSH_SIGNING_KEY?.replace(/\\n/g, '\n').trim();
  if (!key) return undefined;
  const kid = env.TURNPIKE_A2A_PUSH_SIGNING_KID?.trim();
  return { key, ...(kid ? { kid } : {}) };
}
