/**
 * A tool's approval as an object: who decides, how many of them, whether the requester is
 * excluded, and what happens when nobody decides. `defineTool` checks it; the registry turns it
 * into the data the workflow keeps (`ToolSpec.rule`); the model step asks its `when` policy.
 *
 *   approval: { quorum: 2, approverGroups: ['finance'], excludeRequester: true,
 *               escalate: [{ after: '4h', to: { approverGroups: ['finance-managers'] } }, { after: '24h', deny: 'no decision' }] }
 */
import { msToNumber } from '@temporalio/common';
import type { ApprovalDecision, ApprovalRuleSpec, ApproverSet, EscalationStep } from '../workflows/types/index.js';


/** A policy's verdict: a bare decision, or one with a reason shown to approvers and the model. */
export type ApprovalVerdict = ApprovalDecision | { decision: ApprovalDecision; reason?: string };

export type ApprovalPolicy<Input> = true | ((input: Input, context: { toolCallId: string }) => ApprovalVerdict | Promise<ApprovalVerdict>);

/** `defineTool`'s `approval` as an object. */
export interface ApprovalRule<Input> extends ApproverSet {
  /** Which calls wait for people: `true` (every call, the default) or a policy function, as `approval` itself takes. */
  when?: ApprovalPolicy<Input>;
  /** Distinct approvers who must approve the same input (default 1). An edit of the input restarts the votes. */
  quorum?: number;
  /** The person who started the turn (its `startedBy`) may not vote. */
  excludeRequester?: boolean;
  /** Denials that deny the call (default 1: one denial denies). */
  denials?: number;
  /**
   * When nobody decides: after each step's `after` (from the moment the call parked), add
   * approvers and nudge them (`to`), or deny the call (`deny`, the reason the model is told).
   * Steps must come in order of `after`, and before the turn's `approvalTimeout`.
   */
  escalate?: EscalationStep[];
}

/** Whether `approval` is the object form. */
export function isApprovalRule<Input>(approval: unknown): approval is ApprovalRule<Input> {
  return approval !== null && typeof approval === 'object' && !Array.isArray(approval);
}

/** The policy that says which calls park: `true`, a function, or none (the tool runs at once). */
export function approvalPolicyOf<Input>(approval: ApprovalPolicy<Input> | ApprovalRule<Input> | undefined): ApprovalPolicy<Input> | undefined {
  if (!isApprovalRule<Input>(approval)) return approval;
  return approval.when ?? true;
}

/** What is wrong with an approval object, or undefined. */
export function approvalRuleProblem(rule: ApprovalRule<never>, toolApprovers: ApproverSet): string | undefined {
  const { when, quorum, denials, excludeRequester, escalate } = rule;
  if (when !== undefined && when !== true && typeof when !== 'function') return 'approval.when must be true or a policy function';
  for (const [name, list] of [['approvers', rule.approvers], ['approverGroups', rule.approverGroups]] as const) {
    if (list !== undefined && (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || item.length === 0))) return `approval.${name} must be a list of names`;
  }
  for (const [name, value] of [['quorum', quorum], ['denials', denials]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 50)) return `approval.${name} must be an integer from 1 to 50`;
  }
  if (excludeRequester !== undefined && typeof excludeRequester !== 'boolean') return 'approval.excludeRequester must be a boolean';
  const approvers = [...(toolApprovers.approvers ?? []), ...(rule.approvers ?? [])];
  const groups = [...(toolApprovers.approverGroups ?? []), ...(rule.approverGroups ?? [])];
  if (groups.length === 0 && approvers.length > 0 && (quorum ?? 1) > new Set(approvers).size) {
    return `approval.quorum is ${quorum} but only ${new Set(approvers).size} approvers are named`;
  }
  if (escalate === undefined) return undefined;
  if (!Array.isArray(escalate) || escalate.length === 0) return 'approval.escalate must be a non-empty list of steps';
  let last = 0;
  for (const [index, step] of escalate.entries()) {
    const where = `approval.escalate[${index}]`;
    let after: number;
    try {
      after = msToNumber(step.after as Parameters<typeof msToNumber>[0]);
    } catch {
      return `${where}.after must be a duration such as '4h'`;
    }
    if (!(after > last)) return `${where}.after must be later than the step before it`;
    last = after;
    if ((step.to === undefined) === (step.deny === undefined)) return `${where} must have either to or deny`;
    if (step.deny !== undefined && (typeof step.deny !== 'string' || step.deny.length === 0)) return `${where}.deny must be the reason, a non-empty string`;
    if (step.to !== undefined && (step.to.approvers?.length ?? 0) + (step.to.approverGroups?.length ?? 0) === 0) return `${where}.to names no approver and no group`;
    if (step.deny !== undefined && index !== escalate.length - 1) return `${where}: a deny step must be the last`;
  }
  return undefined;
}

/** The spec fields of a tool's approval: its approvers merged with the rule's, and the rule as data. */
export function approvalSpecFields(approval: unknown, tool: ApproverSet): ApproverSet & { rule?: ApprovalRuleSpec } {
  const merge = (a: string[] | undefined, b: string[] | undefined) => (a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined);
  const rule = isApprovalRule<never>(approval) ? approval : undefined;
  const approvers = merge(tool.approvers, rule?.approvers);
  const approverGroups = merge(tool.approverGroups, rule?.approverGroups);
  const spec: ApprovalRuleSpec = {
    ...(rule?.quorum !== undefined ? { quorum: rule.quorum } : {}),
    ...(rule?.excludeRequester ? { excludeRequester: true } : {}),
    ...(rule?.denials !== undefined ? { denials: rule.denials } : {}),
    ...(rule?.escalate ? { escalate: rule.escalate.map((step) => (step.deny !== undefined ? { after: step.after, deny: step.deny } : { after: step.after, to: { ...step.to } })) } : {}),
  };
  return {
    ...(approvers ? { approvers } : {}),
    ...(approverGroups ? { approverGroups } : {}),
    ...(Object.keys(spec).length > 0 ? { rule: spec } : {}),
  };
}
