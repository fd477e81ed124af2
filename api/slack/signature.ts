/**
 * Slack's v0 request signature: `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, keyed by the
 * app's signing secret, of `v0:{X-Slack-Request-Timestamp}:{raw body}`. A request is accepted only
 * when signed, inside a five-minute window of this process's clock, and not seen before: a
 * signature already accepted inside the window is a replay and is refused.
 *
 * The replay memory is per process. Several API processes behind one balancer each keep their own,
 * so a replay sent to another process passes this check; what it would decide is still checked by
 * the turn (a call already decided refuses a second decision), so a replay changes nothing there.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's window: requests whose timestamp is further than this from now are refused. */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

/** Why a request was refused, or `ok`. */
export type SlackSignatureVerdict = 'ok' | 'unsigned' | 'old-timestamp' | 'bad-signature' | 'replayed';

/** The signature Slack would send for `rawBody` at `timestamp` (seconds). */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

/** Verifies Slack's signatures and remembers the ones it accepted for the length of the window. */
export class SlackSignatureVerifier {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly signingSecret: string,
    private readonly now: () => number = () => Date.now(),
  ) {
    if (!signingSecret) throw new Error('Slack interactions need a signing secret (SLACK_SIGNING_SECRET)');
  }

  verify(headers: { signature?: string; timestamp?: string }, rawBody: string): SlackSignatureVerdict {
    const { signature, timestamp } = headers;
    if (!signature || !timestamp) return 'unsigned';
    if (!/^\d{1,12}$/.test(timestamp)) return 'unsigned';
    const nowSeconds = Math.floor(this.now() / 1000);
    if (Math.abs(nowSeconds - Number(timestamp)) > SLACK_SIGNATURE_WINDOW_SECONDS) return 'old-timestamp';
    const expected = Buffer.from(slackSignature(this.signingSecret, timestamp, rawBody));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad-signature';
    this.forgetOld(nowSeconds);
    if (this.seen.has(signature)) return 'replayed';
    this.seen.set(signature, Number(timestamp));
    return 'ok';
  }

  private forgetOld(nowSeconds: number): void {
    for (const [signature, timestamp] of this.seen) {
      if (nowSeconds - timestamp > SLACK_SIGNATURE_WINDOW_SECONDS) this.seen.delete(signature);
    }
  }
}
