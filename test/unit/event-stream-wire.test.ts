/**
 * The event stream's wire form and pace, without a server: turnpike's stream keeps the wire form
 * of `@temporalio/workflow-streams` 1.23.0 (so histories recorded with it replay, and its clients
 * still publish and poll), and a model step's signals stay within a run's budget however long it
 * streams.
 */
import { describe, expect, it } from 'vitest';
import { flushIntervalMs } from '../../activities/step-stream.js';
import { decodeBase64, decodePayloadWire, encodeBase64, encodePayloadWire } from '../../workflows/stream/stream-wire.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array | null | undefined) => new TextDecoder().decode(data ?? new Uint8Array(0));

describe('the wire form of a stream item', () => {
  // Written by @temporalio/workflow-streams 1.23.0's encodePayloadWire for the same payloads.
  const LIBRARY = {
    json: 'ChYKCGVuY29kaW5nEgpqc29uL3BsYWluEj57InR5cGUiOiJ0ZXh0LWRlbHRhIiwidGV4dCI6ImjDqWxsbyDinJMiLCJzdGVwIjoxLCJhdHRlbXB0IjoxfQ==',
    empty: 'ChcKCGVuY29kaW5nEgtiaW5hcnkvbnVsbA==',
  };
  const event = JSON.stringify({ type: 'text-delta', text: 'héllo ✓', step: 1, attempt: 1 });

  it('is byte for byte what @temporalio/workflow-streams 1.23.0 wrote, both ways', () => {
    expect(encodePayloadWire({ metadata: { encoding: bytes('json/plain') }, data: bytes(event) })).toBe(LIBRARY.json);
    expect(encodePayloadWire({ metadata: { encoding: bytes('binary/null') }, data: new Uint8Array(0) })).toBe(LIBRARY.empty);
    const decoded = decodePayloadWire(LIBRARY.json);
    expect(text(decoded.metadata!.encoding)).toBe('json/plain');
    expect(text(decoded.data)).toBe(event);
    expect(decodePayloadWire(LIBRARY.empty).data).toEqual(new Uint8Array(0));
  });

  it('round-trips every length of bytes through base64, and refuses what is not base64', () => {
    for (let length = 0; length < 70; length++) {
      const data = Uint8Array.from({ length }, (_, index) => (index * 37 + length) & 0xff);
      const encoded = encodeBase64(data);
      expect(encoded).toBe(Buffer.from(data).toString('base64'));
      expect(decodeBase64(encoded)).toEqual(data);
    }
    expect(() => decodeBase64('a')).toThrow(TypeError);
    expect(() => decodeBase64('ab!d')).toThrow(TypeError);
    expect(() => decodePayloadWire('CgU=')).toThrow(/runs past the end/);
  });
});

describe("a streaming step's pace", () => {
  /** Signals a run sends streaming without a pause for `seconds`: one per flush interval. */
  function signalsIn(seconds: number): number {
    let signals = 0;
    for (let elapsed = 0; elapsed < seconds * 1000; elapsed += flushIntervalMs(signals)) signals++;
    return signals;
  }

  it('slows as the run takes signals: 200 ms at first, 5 s at the slowest', () => {
    expect(flushIntervalMs(0)).toBe(200);
    expect(flushIntervalMs(299)).toBe(200);
    expect(flushIntervalMs(300)).toBe(500);
    expect(flushIntervalMs(1_200)).toBe(2_000);
    expect(flushIntervalMs(1_000_000)).toBe(5_000);
  });

  it("keeps 30 minutes of streaming under a fifth of a run's 10,000 signals, and 3 hours under half", () => {
    expect(signalsIn(60)).toBe(300);
    expect(signalsIn(30 * 60)).toBe(1_695);
    expect(signalsIn(3 * 60 * 60)).toBeLessThan(5_000);
  });
});
