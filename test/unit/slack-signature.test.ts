/**
 * Slack's v0 request signature (api/slack/signature.ts): Slack's documented example signs to the
 * documented value; unsigned, tampered, old and replayed requests are refused.
 */
import { describe, expect, it } from 'vitest';
import { SlackSignatureVerifier, slackSignature } from '../../api/slack/signature.js';

// Slack's own example (api.slack.com/authentication/verifying-requests-from-slack).
const DOC_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOC_TIMESTAMP = '1531420618';
const DOC_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOC_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

describe('Slack request signatures', () => {
  it("signs Slack's documented example to its documented signature", () => {
    expect(slackSignature(DOC_SECRET, DOC_TIMESTAMP, DOC_BODY)).toBe(DOC_SIGNATURE);
  });

  it('accepts a fresh signed request once, and refuses unsigned, tampered, old and replayed ones', () => {
    const clock = { now: Number(DOC_TIMESTAMP) * 1000 + 10_000 };
    const verifier = new SlackSignatureVerifier(DOC_SECRET, () => clock.now);
    const signed = { signature: DOC_SIGNATURE, timestamp: DOC_TIMESTAMP };
    expect(verifier.verify({}, DOC_BODY)).toBe('unsigned');
    expect(verifier.verify({ ...signed, signature: DOC_SIGNATURE.replace(/3$/, '4') }, DOC_BODY)).toBe('bad-signature');
    expect(verifier.verify(signed, `${DOC_BODY}&x=1`)).toBe('bad-signature');
    expect(verifier.verify(signed, DOC_BODY)).toBe('ok');
    expect(verifier.verify(signed, DOC_BODY)).toBe('replayed');
    clock.now = Number(DOC_TIMESTAMP) * 1000 + 301_000;
    expect(new SlackSignatureVerifier(DOC_SECRET, () => clock.now).verify(signed, DOC_BODY)).toBe('old-timestamp');
  });
});
