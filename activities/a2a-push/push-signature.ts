/**
 * The signature of an A2A push notification, and its check for receivers. The same HMAC-SHA256
 * as the approval webhooks' (notify.ts: `sha256=<hex of HMAC("<timestamp>.<body>")>` in
 * `X-Turnpike-Signature`, the timestamp in `X-Turnpike-Timestamp`), keyed with the config's
 * `token`: a secret only the client that set the config and turnpike know (turnpike chooses one
 * and answers it when the client gave none). Not the webhooks' shared secret: a key every
 * receiver held would let any of them sign for the others.
 */
import { timingSafeEqual } from 'node:crypto';
import { signNotification } from '../notify.js';

export const PUSH_TOKEN_HEADER = 'x-a2a-notification-token';
export const PUSH_SIGNATURE_HEADER = 'x-turnpike-signature';
export const PUSH_TIMESTAMP_HEADER = 'x-turnpike-timestamp';
export const PUSH_DELIVERY_HEADER = 'x-turnpike-delivery';

/** `sha256=<hex>` of the body and timestamp, keyed with the config's token. */
export function signPushNotification(token: string, timestamp: string, body: string): string {
  return signNotification(token, timestamp, body);
}

export interface PushNotificationCheck {
  /** The token the receiver gave in its config (or the one turnpike answered). */
  token: string;
  /** The request's body, exactly as received (bytes or text). */
  body: string | Uint8Array;
  /** The request's headers (any case; a Node `IncomingHttpHeaders` or a fetch `Headers`). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** How old a notification may be, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Now, in ms (for tests). */
  now?: number;
}

/**
 * Checks that a push notification comes from turnpike for this config: its signature over the body
 * and timestamp, its timestamp within `toleranceSeconds` of now, and its token. Returns the reason
 * it is refused, or undefined when it is good. Answer a refused notification with 401: turnpike
 * does not retry it.
 */
export function checkPushNotification({ token, body, headers, toleranceSeconds = 300, now = Date.now() }: PushNotificationCheck): string | undefined {
  const header = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]);
    return (Array.isArray(value) ? value[0] : value) ?? undefined;
  };
  const signature = header(PUSH_SIGNATURE_HEADER);
  const timestamp = header(PUSH_TIMESTAMP_HEADER);
  if (!signature || !timestamp) return 'no signature';
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return 'timestamp out of range';
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const expected = Buffer.from(signPushNotification(token, timestamp, text));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'signature does not match';
  const sentToken = Buffer.from(header(PUSH_TOKEN_HEADER) ?? '');
  const ownToken = Buffer.from(token);
  if (sentToken.length !== ownToken.length || !timingSafeEqual(sentToken, ownToken)) return 'token does not match';
  return undefined;
}
