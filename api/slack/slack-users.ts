/**
 * Who a Slack user is in turnpike: the identity and groups a decision from Slack carries, as a
 * signed-in caller's would (api/auth.ts). Either a table by Slack user id, or by email: the
 * user's `profile.email` from `users.info` (bot scopes `users:read` and `users:read.email`),
 * then a table or a function from email to identity. A user the mapping does not name is nobody:
 * their clicks are refused. `users.info` answers are kept for a few minutes.
 *
 * An identity bound to a tenant (its `tenant`, else its entry in `TURNPIKE_API_TENANTS`, as the
 * HTTP API binds a caller: api/tenant-binding.ts) decides only that tenant's calls.
 */
import type { Caller } from '../auth.js';

/** A turnpike identity for a Slack user: the approver a decision carries, and its groups. */
export interface SlackIdentity {
  /** The approver identity decisions carry (as an OIDC caller's `email` or `sub`). */
  subject: string;
  /** The groups the tool's `approverGroups` are matched against. */
  groups?: readonly string[];
  /**
   * The tenant the identity is bound to: it decides only that tenant's calls. When omitted, the
   * identity's entry in `ApiOptions.tenants` (`TURNPIKE_API_TENANTS`) binds it, if it has one.
   */
  tenant?: string;
}

/** From a Slack user's email (from `users.info`) to an identity, or undefined for nobody. */
export type SlackEmailMapping = Readonly<Record<string, SlackIdentity>> | ((email: string) => SlackIdentity | undefined | Promise<SlackIdentity | undefined>);

/**
 * Slack user id → identity (`{ U0123ABCD: { subject: 'alice', groups: ['finance'] } }`), or
 * `{ byEmail }`: the user's email, from `users.info`, → identity.
 */
export type SlackUserMapping = Readonly<Record<string, SlackIdentity>> | { byEmail: SlackEmailMapping };

/** How long a `users.info` answer is kept. */
export const SLACK_USER_CACHE_MS = 5 * 60 * 1000;
const USERS_KEPT = 10_000;

/** The part of `@slack/web-api`'s `WebClient` the mapping uses. */
export interface SlackUsersApi {
  users: { info(args: { user: string }): Promise<{ user?: { profile?: { email?: string } } }> };
}

export class SlackUsers {
  private readonly emails = new Map<string, { email: string | undefined; until: number }>();

  constructor(
    private readonly mapping: SlackUserMapping,
    private readonly slack: () => Promise<SlackUsersApi>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The caller a Slack user id stands for, or undefined (unknown, or no email Slack gives). */
  async caller(userId: string): Promise<Caller | undefined> {
    const identity = 'byEmail' in this.mapping && isEmailMapping(this.mapping.byEmail) ? await this.byEmail(userId, this.mapping.byEmail) : ownEntry(this.mapping as Record<string, SlackIdentity>, userId);
    if (!identity || typeof identity.subject !== 'string' || identity.subject.length === 0) return undefined;
    const tenant = typeof identity.tenant === 'string' && identity.tenant.length > 0 ? identity.tenant : undefined;
    return { identity: identity.subject, groups: [...(identity.groups ?? [])], ...(tenant !== undefined ? { tenant } : {}) };
  }

  private async byEmail(userId: string, mapping: SlackEmailMapping): Promise<SlackIdentity | undefined> {
    const email = await this.email(userId);
    if (!email) return undefined;
    return typeof mapping === 'function' ? mapping(email) : ownEntry(mapping, email);
  }

  private async email(userId: string): Promise<string | undefined> {
    const cached = this.emails.get(userId);
    if (cached && cached.until > this.now()) return cached.email;
    let email: string | undefined;
    try {
      email = (await (await this.slack()).users.info({ user: userId })).user?.profile?.email;
    } catch (error) {
      // `user_not_found` is nobody (and kept); anything else (Slack unreachable) is asked again next time.
      if ((error as { data?: { error?: string } }).data?.error !== 'user_not_found') throw error;
    }
    this.emails.delete(userId);
    this.emails.set(userId, { email, until: this.now() + SLACK_USER_CACHE_MS });
    if (this.emails.size > USERS_KEPT) this.emails.delete(this.emails.keys().next().value!);
    return email;
  }
}

function isEmailMapping(value: unknown): value is SlackEmailMapping {
  return typeof value === 'function' || (typeof value === 'object' && value !== null && !('subject' in value));
}

/** A table's own entry only: a user id such as `constructor` or `__proto__` names nobody. */
function ownEntry(table: Readonly<Record<string, SlackIdentity>>, key: string): SlackIdentity | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
