/**
 * The tenant an HTTP API caller is bound to, and the tenant and priority a start request gets.
 * The tenant comes from who the caller is: a claim of its token or sign-in (`tenantClaim`), else
 * the operator's table of identities (`TURNPIKE_API_TENANTS`). A request body never names it,
 * except from a caller who may read everything (an admin: a trusted backend starting work for its
 * customers); from anyone else a body's `tenant` is refused, and nothing starts.
 */
import type { TenantPlacement, TurnPriority } from '../client/tenants.js';
import type { Caller } from './auth.js';

/** Gives a caller without a tenant of its own the one the table binds its identity to. */
export function tenantBinder(tenants: ReadonlyMap<string, string> | undefined): <C extends Caller | undefined>(caller: C) => C {
  return <C extends Caller | undefined>(caller: C): C => {
    if (!caller || caller.tenant !== undefined) return caller;
    const tenant = tenants?.get(caller.identity);
    return (tenant !== undefined ? { ...caller, tenant } : caller) as C;
  };
}

/**
 * The placement of a turn or conversation a caller starts: its own tenant, or the body's when
 * the caller is an admin; a string saying why when the body names a tenant the caller may not set.
 */
export function requestPlacement(caller: Caller, admin: boolean, body: { tenant?: string; priority?: TurnPriority }): TenantPlacement | string {
  const { tenant: asked, priority } = body;
  const allowed = asked === undefined || admin || asked === caller.tenant;
  if (!allowed) {
    return caller.tenant === undefined
      ? 'tenant may not be set in the request body: a caller\'s tenant comes from its identity (a claim, or TURNPIKE_API_TENANTS); only an admin names one'
      : `tenant may not be set in the request body: this caller is bound to tenant ${JSON.stringify(caller.tenant)}`;
  }
  const tenant = asked ?? caller.tenant;
  return { ...(tenant !== undefined ? { tenant } : {}), ...(priority !== undefined ? { priority } : {}) };
}

/**
 * Why a listing's `?tenant=` is refused, or undefined: a caller bound to a tenant may name only
 * its own (it sees no other), anyone else any tenant. The refusal is a 400 that says nothing of
 * the tenant named, the same whether it exists or not; a 404 would suggest a resource was looked up.
 */
export function tenantFilterProblem(caller: Caller, admin: boolean, tenant: string | undefined): string | undefined {
  if (tenant === undefined || sameTenant(caller, admin, tenant)) return undefined;
  return `tenant ${JSON.stringify(tenant)} may not be listed: this caller is bound to tenant ${JSON.stringify(caller.tenant)} and sees only its turns`;
}

/** Whether a tenant-bound caller may see a turn of `tenant`: an unbound caller or an admin sees every tenant's. */
export function sameTenant(caller: Caller, admin: boolean, tenant: string | undefined): boolean {
  return admin || caller.tenant === undefined || caller.tenant === tenant;
}
