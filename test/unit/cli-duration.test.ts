/**
 * `--retention`'s parser: a whole number and a unit, in milliseconds; anything else a usage error.
 */
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../cli/arguments.js';

describe('parseDuration', () => {
  it('reads seconds, minutes, hours, days and weeks', () => {
    expect(parseDuration('45s')).toBe(45_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    expect(parseDuration('2w')).toBe(1_209_600_000);
  });

  it('refuses no unit, other units, fractions, zero and words', () => {
    for (const value of ['7', '7y', '1.5h', '0d', '7 days', '', '-1h']) expect(() => parseDuration(value)).toThrow(InvalidArgumentError);
  });
});
