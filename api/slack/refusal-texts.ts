/** What a person who clicked in Slack is told when the turn refuses their decision (only they see it). */
import type { RejectionType } from '../../workflows/messages/rejection-types.js';

export const NOT_ALLOWED = 'You may not decide this call, so nothing was changed.';

export function refusalText(type: RejectionType, message: string): string {
  switch (type) {
    case 'ApproverNotAllowed':
    case 'NotFound':
    case 'UnknownApprovalId':
      return NOT_ALLOWED;
    case 'RequesterMayNotDecide':
      return 'You asked for this call, and its approval is for others to give; nothing was changed.';
    case 'AlreadyVoted':
      return 'You already voted on this call; each person votes once.';
    case 'InputHashMismatch':
      return "The call's input changed since this message was posted; nothing was changed. Decide it on the current input.";
    case 'ApprovalAlreadyDecided':
    case 'TurnAlreadyEnded':
    case 'ApprovalCancelled':
    case 'ApprovalSuperseded':
    case 'ApprovalExpired':
      return `This call no longer waits for a decision (${type}); nothing was changed.`;
    default:
      return `turnpike refused the decision (${type}): ${message}`;
  }
}
