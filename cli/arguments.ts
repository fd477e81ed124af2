/**
 * Parsers for commander arguments and options. They throw `InvalidArgumentError`, so a bad value
 * is a usage error (exit code 2) reported by commander, before anything reaches Temporal.
 */
import { InvalidArgumentError } from 'commander';
import { placementProblem, TURN_PRIORITIES, type TurnPriority } from '../client/tenants.js';
import { modelFromEnvironment } from './default-model.js';
import type { ModelSettings } from '../workflows/types/index.js';

/**
 * `provider[:model]`: `openai:gpt-4.1-mini`, `openai-responses:gpt-5-mini`, `anthropic:claude-sonnet-4-6`, `scripted:demo`;
 * without `:model`, the provider's default model (the same defaults as `npm start`).
 */
export function parseModel(value: string): ModelSettings {
  const [provider = '', ...model] = value.split(':');
  try {
    return modelFromEnvironment({ TURNPIKE_PROVIDER: provider, ...(model.length > 0 ? { TURNPIKE_MODEL: model.join(':') } : {}) });
  } catch {
    throw new InvalidArgumentError('expected openai, openai-responses, anthropic or scripted, optionally with :<model>, e.g. openai:gpt-4.1-mini');
  }
}

/** The model when `--model` is not given: `TURNPIKE_PROVIDER` / `TURNPIKE_MODEL`, else by the API key set, else scripted. */
export function defaultModel(): ModelSettings {
  return modelFromEnvironment();
}

export function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(`not valid JSON: ${value} (a string needs quotes: '"text"')`);
  }
}

/** A whole number ≥ 0 (offsets), or ≥ 1 with `parsePositive`. */
export function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

export function parsePositive(value: string): number {
  const count = parseCount(value);
  if (count === 0) throw new InvalidArgumentError('expected a number above 0');
  return count;
}

/** `a,b,c` → `['a', 'b', 'c']`. */
export function parseList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A duration as a whole number and a unit (s, m, h, d, w): `7d`, `12h`, `30m`; in milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)([smhdw])$/.exec(value.trim());
  const ms = match ? Number(match[1]) * (DURATION_UNITS[match[2] as string] as number) : 0;
  if (!match || ms === 0) throw new InvalidArgumentError('expected a duration above 0 as a number and a unit (s, m, h, d, w), e.g. 7d, 12h, 30m');
  return ms;
}

/** `--tenant`: a tenant a turn can carry, checked as the client checks a start's (at most 64 bytes). */
export function parseTenant(value: string): string {
  const problem = placementProblem({ tenant: value });
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

/** `--priority`: interactive, normal or batch. */
export function parsePriority(value: string): TurnPriority {
  const problem = placementProblem({ priority: value as TurnPriority });
  if (problem) throw new InvalidArgumentError(problem);
  return value as TurnPriority;
}

/** The help of `--priority`. */
export const PRIORITY_HELP = `how urgent its tasks are: ${Object.keys(TURN_PRIORITIES).join(', ')} (default: normal)`;
