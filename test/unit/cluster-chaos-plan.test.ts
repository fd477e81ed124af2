/** The cluster chaos test's two forms (test/cluster/chaos-plan.ts): what each does, and when. */
import { describe, expect, it } from 'vitest';
import { approvedCharges, chaosForm, chaosPlan, type ChaosEventKind } from '../cluster/chaos-plan.js';

const count = (kinds: ChaosEventKind[], kind: ChaosEventKind) => kinds.filter((each) => each === kind).length;

describe('the cluster chaos plan', () => {
  it('is short unless TURNPIKE_CLUSTER_CHAOS says long, and refuses anything else by name', () => {
    expect(chaosForm(undefined)).toBe('short');
    expect(chaosForm('')).toBe('short');
    expect(chaosForm('short')).toBe('short');
    expect(chaosForm('long')).toBe('long');
    expect(() => chaosForm('LONG')).toThrow('TURNPIKE_CLUSTER_CHAOS must be "short" (the default) or "long", not "LONG"');
  });

  it.each([
    ['short', 100, 1, 1, 1],
    ['long', 1_000, 20, 3, 1],
  ] as const)('%s: %i turns, %i worker kills, %i server restarts, %i PostgreSQL restart', (form, turns, kills, serverRestarts, postgresRestarts) => {
    const plan = chaosPlan(form);
    const kinds = plan.events.map((event) => event.kind);
    expect(plan.turns).toBe(turns);
    expect([count(kinds, 'worker-kill'), count(kinds, 'server-restart'), count(kinds, 'postgres-restart')]).toEqual([kills, serverRestarts, postgresRestarts]);
    // Every event fires while charges still run: strictly increasing marks, all below the approved charges.
    const marks = plan.events.map((event) => event.afterAttempts);
    expect(marks.every((mark, index) => mark > 0 && (index === 0 || mark > marks[index - 1]!))).toBe(true);
    expect(marks.at(-1)!).toBeLessThan(approvedCharges(turns, plan.denyEvery));
  });

  it('spreads the long form: no two restarts next to each other, the PostgreSQL restart between server restarts', () => {
    const kinds = chaosPlan('long').events.map((event) => event.kind);
    expect(kinds.every((kind, index) => kind === 'worker-kill' || kinds[index + 1] === 'worker-kill')).toBe(true);
    const postgres = kinds.indexOf('postgres-restart');
    expect(kinds.indexOf('server-restart')).toBeLessThan(postgres);
    expect(kinds.lastIndexOf('server-restart')).toBeGreaterThan(postgres);
  });
});
