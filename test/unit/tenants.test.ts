/**
 * The checks of a turn's tenant and priority (client/tenants.ts) and the HTTP API's binding of a
 * caller to a tenant (api/tenant-binding.ts), without a server.
 */
import { describe, expect, it } from 'vitest';
import { parseTenantMap, type Caller } from '../../api/auth.js';
import { requestPlacement, sameTenant, tenantBinder } from '../../api/tenant-binding.js';
import { parseTenantWeights, placementProblem, startPlacement, tenantClause } from '../../client/tenants.js';
import { TurnpikeRejectedError } from '../../client/errors.js';

describe('a placement', () => {
  it('becomes the tenant search attribute and the priority', () => {
    const placement = startPlacement('startTurn', { tenant: 'acme', priority: 'batch' }, { acme: 2 });
    expect(placement.priority).toEqual({ priorityKey: 5, fairnessKey: 'acme', fairnessWeight: 2 });
    expect(placement.typedSearchAttributes?.map((pair) => [pair.key.name, pair.value])).toEqual([['TurnpikeTenant', 'acme']]);
    expect(startPlacement('startTurn', { priority: 'interactive' })).toEqual({ priority: { priorityKey: 1 } });
    expect(startPlacement('startTurn', {})).toEqual({});
  });

  it('refuses an unknown priority, an empty tenant and one over 64 bytes', () => {
    expect(placementProblem({ priority: 'urgent' as never })).toBe('unknown priority "urgent"; use one of interactive, normal, batch');
    expect(placementProblem({ priority: 'toString' as never })).toMatch(/unknown priority/);
    expect(placementProblem({ tenant: ' ' })).toBe('tenant must be a non-empty string');
    expect(placementProblem({ tenant: 'x'.repeat(64) })).toBeUndefined();
    expect(placementProblem({ tenant: 'x'.repeat(65) })).toMatch(/65 bytes long/);
    expect(() => startPlacement('sendMessage', { tenant: '€'.repeat(22) })).toThrow(TurnpikeRejectedError);
  });

  it('reads weights and refuses one out of range', () => {
    expect(parseTenantWeights('acme:2, globex:0.5')).toEqual({ acme: 2, globex: 0.5 });
    expect(parseTenantWeights(undefined)).toEqual({});
    expect(() => parseTenantWeights('acme:0')).toThrow(/from 0.001 to 1000/);
    expect(() => parseTenantWeights('acme:lots')).toThrow(/weight NaN/);
    expect(() => parseTenantWeights('acme')).toThrow(/tenant:weight/);
  });

  it('quotes a tenant in a visibility query', () => {
    expect(tenantClause('a"b\\c')).toBe(' AND TurnpikeTenant="a\\"b\\\\c"');
    expect(tenantClause(undefined)).toBe('');
  });
});

describe("an HTTP API caller's tenant", () => {
  const bind = tenantBinder(parseTenantMap('alice:acme,bob:globex'));

  it('comes from the claim, else from the table', () => {
    expect(bind({ identity: 'alice', groups: [] })).toEqual({ identity: 'alice', groups: [], tenant: 'acme' });
    expect(bind<Caller>({ identity: 'alice', groups: [], tenant: 'from-claim' }).tenant).toBe('from-claim');
    expect(bind<Caller>({ identity: 'carol', groups: [] }).tenant).toBeUndefined();
    expect(bind(undefined)).toBeUndefined();
    expect(() => parseTenantMap('alice')).toThrow(/identity:tenant/);
  });

  it("takes a body's tenant from an admin only, or when it is the caller's own", () => {
    const alice = { identity: 'alice', groups: [], tenant: 'acme' };
    const carol = { identity: 'carol', groups: [] };
    expect(requestPlacement(alice, false, { priority: 'batch' })).toEqual({ tenant: 'acme', priority: 'batch' });
    expect(requestPlacement(alice, false, { tenant: 'acme' })).toEqual({ tenant: 'acme' });
    expect(requestPlacement(alice, false, { tenant: 'globex' })).toMatch(/bound to tenant "acme"/);
    expect(requestPlacement(carol, false, { tenant: 'globex' })).toMatch(/only an admin names one/);
    expect(requestPlacement(carol, true, { tenant: 'globex' })).toEqual({ tenant: 'globex' });
    expect(requestPlacement(carol, false, {})).toEqual({});
  });

  it("limits a bound caller to its tenant's turns", () => {
    expect(sameTenant({ identity: 'alice', groups: [], tenant: 'acme' }, false, 'acme')).toBe(true);
    expect(sameTenant({ identity: 'alice', groups: [], tenant: 'acme' }, false, 'globex')).toBe(false);
    expect(sameTenant({ identity: 'alice', groups: [], tenant: 'acme' }, false, undefined)).toBe(false);
    expect(sameTenant({ identity: 'carol', groups: [] }, false, 'globex')).toBe(true);
    expect(sameTenant({ identity: 'ops', groups: [], tenant: 'acme' }, true, 'globex')).toBe(true);
  });
});
