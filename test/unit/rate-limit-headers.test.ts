/**
 * Reading a provider's rate-limit headers (activities/providers/rate-limit-headers.ts), with the
 * header values the providers document and send: OpenAI's Go durations (`6m0s`, `1s`, `20ms`),
 * Anthropic's RFC 3339 resets, `retry-after` as seconds or an HTTP date and `retry-after-ms`.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PROVIDER_PAUSE_MS, parseGoDuration, parseRfc3339, slowDownFrom } from '../../activities/providers/rate-limit-headers.js';
import { checkedFollowProviderHeaders } from '../../worker/provider-headers.js';
import { checkedModelCapacity, modelCapacityFromEnvironment } from '../../worker/model-capacity.js';

const NOW = Date.parse('2025-08-21T12:40:00Z');

describe("OpenAI's reset durations", () => {
  it.each([
    ['6m0s', 360_000],
    ['1s', 1_000],
    ['20ms', 20],
    ['12ms', 12],
    ['1m30.5s', 90_500],
    ['0.5s', 500],
    ['2h0m0s', 7_200_000],
    ['1h2m3s', 3_723_000],
    ['0s', 0],
    ['7', 7_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '1d', '-1s', 's', '1m1h', '5 s'])('refuses %j', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});

describe("Anthropic's reset times", () => {
  it('reads RFC 3339 with Z, an offset or fractions', () => {
    expect(parseRfc3339('2025-08-21T12:40:59Z')).toBe(Date.parse('2025-08-21T12:40:59Z'));
    expect(parseRfc3339('2025-08-21T14:40:59+02:00')).toBe(Date.parse('2025-08-21T12:40:59Z'));
    expect(parseRfc3339('2025-08-21T12:40:59.250Z')).toBe(Date.parse('2025-08-21T12:40:59Z') + 250);
  });

  it('refuses a date without a zone or a time, and garbage', () => {
    expect(parseRfc3339('2025-08-21T12:40:59')).toBeUndefined();
    expect(parseRfc3339('2025-08-21')).toBeUndefined();
    expect(parseRfc3339('Thu, 21 Aug 2025 12:41:00 GMT')).toBeUndefined();
    expect(parseRfc3339('later')).toBeUndefined();
  });
});

describe('slowDownFrom', () => {
  it("asks nothing of OpenAI's headers with room left (the values it sends on a 200)", () => {
    const headers = new Headers({
      'x-ratelimit-limit-requests': '5000',
      'x-ratelimit-limit-tokens': '160000',
      'x-ratelimit-remaining-requests': '4999',
      'x-ratelimit-remaining-tokens': '159976',
      'x-ratelimit-reset-requests': '12ms',
      'x-ratelimit-reset-tokens': '9ms',
    });
    expect(slowDownFrom(200, headers, NOW)).toBeUndefined();
  });

  it("pauses until OpenAI's token reset when no token is left, on a 200 too", () => {
    const headers = new Headers({ 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6m0s' });
    expect(slowDownFrom(200, headers, NOW)).toEqual({ untilMs: NOW + 300_000, reason: 'x-ratelimit-remaining-tokens: 0 (x-ratelimit-reset-tokens: 6m0s)' });
    // Capped at five minutes; below the cap, as said.
    expect(MAX_PROVIDER_PAUSE_MS).toBe(300_000);
    headers.set('x-ratelimit-reset-tokens', '1m30.5s');
    expect(slowDownFrom(200, headers, NOW)?.untilMs).toBe(NOW + 90_500);
  });

  it('takes the latest of the limits used up, and a threshold above 0', () => {
    const headers = new Headers({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20ms', 'x-ratelimit-remaining-tokens': '500', 'x-ratelimit-reset-tokens': '2s' });
    expect(slowDownFrom(200, headers, NOW)?.untilMs).toBe(NOW + 20);
    expect(slowDownFrom(200, headers, NOW, { tokens: 1_000 })?.untilMs).toBe(NOW + 2_000);
    expect(slowDownFrom(200, headers, NOW, { tokens: 499 })?.untilMs).toBe(NOW + 20);
  });

  it("reads OpenAI's 429 (the fake's, as api.openai.com sends it): retry-after and the headers, the latest wins", () => {
    const headers = new Headers({
      'retry-after': '2',
      'x-ratelimit-limit-requests': '600',
      'x-ratelimit-remaining-requests': '12',
      'x-ratelimit-reset-requests': '9.5s',
      'x-ratelimit-limit-tokens': '48000',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '1.25s',
    });
    expect(slowDownFrom(429, headers, NOW)).toEqual({ untilMs: NOW + 2_000, reason: '429 retry-after: 2' });
    headers.set('retry-after-ms', '3500');
    expect(slowDownFrom(429, headers, NOW)).toEqual({ untilMs: NOW + 3_500, reason: '429 retry-after-ms: 3500' });
  });

  it('reads retry-after as an HTTP date, and only on a 429', () => {
    const headers = new Headers({ 'retry-after': 'Thu, 21 Aug 2025 12:40:30 GMT' });
    expect(slowDownFrom(429, headers, NOW)?.untilMs).toBe(NOW + 30_000);
    // A 503's retry-after is the server's trouble, not a rate limit: the activity's retry waits for it.
    expect(slowDownFrom(503, headers, NOW)).toBeUndefined();
    expect(slowDownFrom(429, new Headers({ 'retry-after': 'Thu, 21 Aug 2025 12:39:00 GMT' }), NOW)).toBeUndefined();
    expect(slowDownFrom(429, new Headers(), NOW)).toBeUndefined();
  });

  it("reads Anthropic's headers (api.anthropic.com's, from a real response): nothing with room left", () => {
    const headers = new Headers({
      'anthropic-ratelimit-input-tokens-limit': '80000',
      'anthropic-ratelimit-input-tokens-remaining': '80000',
      'anthropic-ratelimit-input-tokens-reset': '2025-08-21T12:40:59Z',
      'anthropic-ratelimit-output-tokens-limit': '16000',
      'anthropic-ratelimit-output-tokens-remaining': '16000',
      'anthropic-ratelimit-output-tokens-reset': '2025-08-21T12:41:00Z',
      'anthropic-ratelimit-requests-limit': '1000',
      'anthropic-ratelimit-requests-remaining': '999',
      'anthropic-ratelimit-requests-reset': '2025-08-21T12:40:59Z',
      'anthropic-ratelimit-tokens-limit': '96000',
      'anthropic-ratelimit-tokens-remaining': '96000',
      'anthropic-ratelimit-tokens-reset': '2025-08-21T12:40:59Z',
    });
    expect(slowDownFrom(200, headers, NOW)).toBeUndefined();
    headers.set('anthropic-ratelimit-input-tokens-remaining', '0');
    expect(slowDownFrom(200, headers, NOW)).toEqual({
      untilMs: Date.parse('2025-08-21T12:40:59Z'),
      reason: 'anthropic-ratelimit-input-tokens-remaining: 0 (anthropic-ratelimit-input-tokens-reset: 2025-08-21T12:40:59Z)',
    });
    headers.set('anthropic-ratelimit-requests-remaining', '0');
    headers.set('anthropic-ratelimit-requests-reset', '2025-08-21T12:41:10Z');
    expect(slowDownFrom(200, headers, NOW)?.untilMs).toBe(Date.parse('2025-08-21T12:41:10Z'));
    // A reset already past asks for nothing.
    expect(slowDownFrom(200, headers, Date.parse('2025-08-21T12:42:00Z'))).toBeUndefined();
  });

  it("ignores Azure's -1 (not said), unparsable counts and resets", () => {
    expect(slowDownFrom(200, new Headers({ 'x-ratelimit-remaining-tokens': '-1', 'x-ratelimit-reset-tokens': '0' }), NOW)).toBeUndefined();
    expect(slowDownFrom(200, new Headers({ 'x-ratelimit-remaining-tokens': 'none', 'x-ratelimit-reset-tokens': '1s' }), NOW)).toBeUndefined();
    expect(slowDownFrom(200, new Headers({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': 'soon' }), NOW)).toBeUndefined();
    expect(slowDownFrom(200, new Headers({ 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': 'tomorrow' }), NOW)).toBeUndefined();
  });
});

describe('the followProviderHeaders option', () => {
  it('is off unless given, and checked', () => {
    expect(checkedFollowProviderHeaders(undefined)).toBeUndefined();
    expect(checkedFollowProviderHeaders(false)).toBeUndefined();
    expect(checkedFollowProviderHeaders(true)).toEqual({});
    expect(checkedFollowProviderHeaders({ tokens: 2_000 })).toEqual({ tokens: 2_000 });
    expect(() => checkedFollowProviderHeaders({ tokens: -1 })).toThrow(/followProviderHeaders/);
    expect(() => checkedFollowProviderHeaders({ token: 5 })).toThrow(/followProviderHeaders/);
    expect(() => checkedFollowProviderHeaders('yes')).toThrow(/followProviderHeaders/);
    expect(checkedModelCapacity({ followProviderHeaders: true }, 'turns')).toEqual({ taskQueue: 'turns-models', followProviderHeaders: {} });
    expect(checkedModelCapacity({}, 'turns')).toEqual({ taskQueue: 'turns-models' });
  });

  it('comes from TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS', () => {
    expect(modelCapacityFromEnvironment({ TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS: 'true' })).toEqual({ followProviderHeaders: true });
    expect(modelCapacityFromEnvironment({ TURNPIKE_MODEL_TASK_QUEUE: 'm', TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS: 'false' })).toEqual({ taskQueue: 'm' });
    expect(() => modelCapacityFromEnvironment({ TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS: 'yes' })).toThrow(/TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS/);
  });
});
