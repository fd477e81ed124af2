import { describe, expect, it } from 'vitest';
import { APPROVERS_UNSET, approversClause, approverValues, callerValues } from '../../workflows/context/approver-values.js';

describe('TurnpikeApprovers values', () => {
  it('name who may decide each parked call, sorted and once each; none when nothing is parked', () => {
    expect(approverValues([])).toEqual(['none']);
    expect(
      approverValues([
        { kind: 'approval', approvers: ['bob', 'alice'] },
        { kind: 'budget', approverGroups: ['finance'] },
        { kind: 'approval', approvers: ['bob'], approverGroups: ['finance'] },
        { kind: 'approval' },
        { kind: 'client-tool' },
        { kind: 'elicitation' },
      ]),
    ).toEqual(['anyone', 'group:finance', 'reader', 'user:alice', 'user:bob']);
  });

  it('ask, for a caller, for their own values, anyone’s, the client-side calls and the turns that have not published theirs', () => {
    expect(callerValues({ identity: 'bob', groups: ['ops', 'finance'] })).toEqual([APPROVERS_UNSET, 'anyone', 'reader', 'user:bob', 'group:ops', 'group:finance']);
    expect(callerValues({})).toEqual([APPROVERS_UNSET, 'anyone', 'reader']);
  });

  it('never carry a quote, a backslash or a control character, on either side, and are cut at 255 characters', () => {
    const hostile = `o'brien "x" \\ y\n`;
    const [published] = approverValues([{ kind: 'approval', approvers: [hostile] }]);
    expect(published).toBe('user:o_brien _x_ _ y_');
    expect(callerValues({ identity: hostile })).toContain(published);
    expect(approversClause(callerValues({ identity: hostile }))).toBe("(TurnpikeApprovers IN ('unset', 'anyone', 'reader', 'user:o_brien _x_ _ y_') OR TurnpikeApprovers IS NULL)");
    const long = 'a'.repeat(400);
    expect(approverValues([{ kind: 'approval', approvers: [long] }])[0]).toHaveLength(255);
    expect(callerValues({ identity: long }).at(-1)).toBe(approverValues([{ kind: 'approval', approvers: [long] }])[0]);
  });
});
