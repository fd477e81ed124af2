/**
 * The lists of rejection types and turn statuses are the single source: the guides' tables, the
 * HTTP statuses and the CLI's help all follow them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { isRejectionType, REJECTION_TYPES } from '../../workflows/messages/rejection-types.js';
import { isTurnEnded, TURN_STATUSES, type TurnStatus } from '../../workflows/types/turn-statuses.js';

/** The guides that hold the tables: rejection types (tools and approvals), turn statuses (operators). */
const GUIDES = ['tools-and-approvals.md', 'operators.md'].map((name) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8')).join('\n');

/** The guides' text between `<!-- name:start -->` and `<!-- name:end -->`. */
function readmeSection(name: string): string {
  const match = GUIDES.match(new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`));
  if (!match) throw new Error(`docs/ has no ${name} section`);
  return match[1];
}

describe('the guides', () => {
  it('lists exactly the rejection types of REJECTION_TYPES, with their HTTP statuses and meanings', () => {
    const expected = [
      '| type | raised by | HTTP | meaning |',
      '|---|---|---|---|',
      ...Object.entries(REJECTION_TYPES).map(([type, info]) => `| \`${type}\` | ${info.raisedBy.join(', ')} | ${info.httpStatus} | ${info.description} |`),
      '',
    ].join('\n');
    expect(readmeSection('rejection-types'), 'update the README table from workflows/messages/rejection-types.ts').toBe(expected);
  });

  it('lists exactly the turn statuses of TURN_STATUSES', () => {
    const expected = [
      '| status | ended | meaning |',
      '|---|---|---|',
      ...Object.entries(TURN_STATUSES).map(([status, info]) => `| \`${status}\` | ${info.ended ? 'yes' : 'no'} | ${info.description} |`),
      '',
    ].join('\n');
    expect(readmeSection('turn-statuses'), 'update the README table from workflows/types/turn-statuses.ts').toBe(expected);
  });
});

describe('rejection types', () => {
  it('answers "no such thing" with 404, a malformed message with 400, and any other refusal of a turn with 409', () => {
    const byStatus = (status: number) => Object.entries(REJECTION_TYPES).filter(([, info]) => (info.raisedBy as readonly string[]).includes('turn') && info.httpStatus === status).map(([type]) => type);
    expect(byStatus(404)).toEqual(['UnknownApprovalId', 'UnknownToolCallId']);
    expect(byStatus(400)).toEqual(['InvalidRequest', 'UndecodablePayload']);
    expect(Object.values(REJECTION_TYPES).every((info) => [400, 401, 403, 404, 409, 500, 503].includes(info.httpStatus))).toBe(true);
  });

  it('recognises its own types only', () => {
    expect(isRejectionType('ApprovalExpired')).toBe(true);
    expect(isRejectionType('toString')).toBe(false);
    expect(isRejectionType('InvalidTurnInput')).toBe(false);
    expect(isRejectionType(undefined)).toBe(false);
  });
});

describe('turn statuses', () => {
  it('tells the statuses a turn ends with from those it passes through', () => {
    const ended = (Object.keys(TURN_STATUSES) as TurnStatus[]).filter(isTurnEnded);
    expect(ended).toEqual(['completed', 'max-steps', 'max-tokens', 'refused', 'invalid-output', 'budget-exceeded', 'cancelled']);
  });
});

describe('turnpike --help', () => {
  it('lists every rejection type a command can exit 3 with, and every turn status', async () => {
    let stdout = '';
    const code = await runCli(['--help'], { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: () => true } });
    expect(code).toBe(0);
    for (const [type, info] of Object.entries(REJECTION_TYPES)) {
      if (info.raisedBy.some((by) => by !== 'api')) expect(stdout).toMatch(new RegExp(`^  ${type} +\\S`, 'm'));
      else expect(stdout).not.toContain(type);
    }
    for (const status of Object.keys(TURN_STATUSES)) expect(stdout).toMatch(new RegExp(`^  ${status} +\\S`, 'm'));
  });
});
