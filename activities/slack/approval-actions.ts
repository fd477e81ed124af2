/**
 * What ties a Slack approval message to the call it decides: the `action_id`s of its buttons,
 * the `callback_id` of the "Deny with reason" modal, and the `value` every button (and the
 * modal's `private_metadata`) carries. The worker writes them into the message it posts; the API
 * reads them back from Slack's signed interaction payloads.
 */

export const SLACK_ACTIONS = {
  approve: 'turnpike.approve',
  deny: 'turnpike.deny',
  denyWithReason: 'turnpike.deny-with-reason',
} as const;

/** The modal that asks for a denial's reason, and its one input. */
export const SLACK_DENY_REASON_VIEW = { callbackId: 'turnpike.deny-reason', blockId: 'reason', actionId: 'reason' } as const;

/** Which call a button decides, and on which input (the input hash every vote saw). */
export interface SlackApprovalRef {
  turnId: string;
  approvalId: string;
  inputHash: string;
}

/** A button's `value` (Slack allows 2,000 characters; ids and a hash fit well inside). */
export function encodeApprovalRef(ref: SlackApprovalRef): string {
  return JSON.stringify({ t: ref.turnId, a: ref.approvalId, h: ref.inputHash });
}

/** The reference in a button's `value`, or undefined when it is not one turnpike wrote. */
export function decodeApprovalRef(value: unknown): SlackApprovalRef | undefined {
  if (typeof value !== 'string' || value.length > 2000) return undefined;
  try {
    const parsed = JSON.parse(value) as { t?: unknown; a?: unknown; h?: unknown };
    if (typeof parsed.t !== 'string' || typeof parsed.a !== 'string' || typeof parsed.h !== 'string') return undefined;
    return { turnId: parsed.t, approvalId: parsed.a, inputHash: parsed.h };
  } catch {
    return undefined;
  }
}
