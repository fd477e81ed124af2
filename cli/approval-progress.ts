/**
 * How far an approval has come, in one line for people: votes against the quorum, the
 * escalation steps that fired or are due, and delegations. `pending`, `approve`, `deny` and
 * `delegate` print it; `--json` carries the whole `progress`.
 */
import type { ApprovalProgress, ApproverSet } from '../workflows/types/index.js';

/** `alice, group finance`. */
export function approverList(set: ApproverSet): string {
  return [...(set.approvers ?? []), ...(set.approverGroups ?? []).map((group) => `group ${group}`)].join(', ');
}

/** `1/2 approved (alice ✔); escalated to group finance-managers; delegated by alice to bob`. */
export function progressSummary(progress: ApprovalProgress | undefined): string {
  if (!progress) return '';
  const approvals = progress.votes.filter((vote) => vote.approved).length;
  const voters = progress.votes.map((vote) => `${vote.approver ?? 'someone'} ${vote.approved ? '✔' : '✘'}`);
  const parts = [`${approvals}/${progress.quorum} approved${voters.length > 0 ? ` (${voters.join(', ')})` : ''}`];
  for (const step of progress.escalation ?? []) {
    const what = step.deny !== undefined ? `deny "${step.deny}"` : `escalate to ${approverList(step.to ?? {})}`;
    parts.push(step.firedAt ? `${what}: fired ${step.firedAt}` : `${what} at ${step.dueAt}`);
  }
  for (const delegation of progress.delegations ?? []) parts.push(`delegated by ${delegation.from} to ${approverList(delegation.to)}: ${delegation.reason}`);
  return parts.join('; ');
}
