/**
 * The Slack message of one parked call, in Block Kit: the tool, its input, why it asks, the votes
 * so far, the escalation steps and delegations, the deadline, and the Approve / Deny / "Deny with
 * reason" buttons, each carrying the call's reference (approval-actions.ts). Once the call is
 * decided, expired or superseded, the same message shows how it ended and has no buttons.
 *
 * Pure: a function of the nudge. Every text is escaped for Slack's mrkdwn and cut to fit Slack's
 * limits (3,000 characters in a section's text) without splitting an escape or a character.
 */
import type { ApprovalNotification, ApproverSet } from '../../workflows/types/index.js';
import { encodeApprovalRef, SLACK_ACTIONS } from './approval-actions.js';

/** Slack's limit on a section block's text. */
export const SECTION_TEXT_LIMIT = 3000;

export type SlackBlock = Record<string, unknown>;

export interface SlackApprovalMessage {
  /** The fallback: notifications, screen readers, clients that show no blocks. */
  text: string;
  blocks: SlackBlock[];
}

const ENDINGS: Record<string, { icon: string; word: string }> = {
  approved: { icon: ':white_check_mark:', word: 'Approved' },
  denied: { icon: ':x:', word: 'Denied' },
  expired: { icon: ':hourglass:', word: 'Expired' },
  superseded: { icon: ':fast_forward:', word: 'Superseded' },
  cancelled: { icon: ':no_entry_sign:', word: 'Cancelled' },
};

/** The message for a nudge: open with buttons until `decided`, then its final state without them. */
export function approvalMessage(notification: ApprovalNotification): SlackApprovalMessage {
  const final = notification.event === 'decided';
  const ending = final ? (ENDINGS[notification.outcome ?? ''] ?? { icon: ':grey_question:', word: 'Decided' }) : undefined;
  const tool = `\`${escape(notification.toolName)}\``;
  const title = ending ? `${ending.icon} *${ending.word}:* ${tool}` : `:raised_hand: *Approval needed:* ${tool}`;
  const blocks: SlackBlock[] = [section(clip(`${title}\n${escape('turn ')}\`${escape(notification.turnId)}\``))];
  if (notification.reason) blocks.push(section(`*Why:* ${clipEscaped(notification.reason, SECTION_TEXT_LIMIT - 8)}`));
  blocks.push(section(inputText(notification.input)));
  const progress = progressLines(notification);
  if (progress.length > 0) blocks.push(section(clip(progress.join('\n'))));
  if (ending) {
    blocks.push(section(clip(endingLine(notification, ending.word))));
  } else {
    const due = `*Decide by* ${slackDate(notification.expiresAt)}`;
    blocks.push(section(notification.event === 'expiring' ? `:alarm_clock: *Expiring soon.* ${due}` : due));
    blocks.push(buttons(notification));
  }
  return { text: fallback(notification, ending?.word), blocks };
}

function section(text: string): SlackBlock {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

function buttons(notification: ApprovalNotification): SlackBlock {
  const value = encodeApprovalRef({ turnId: notification.turnId, approvalId: notification.approvalId, inputHash: notification.inputHash });
  const button = (actionId: string, label: string, style?: 'primary' | 'danger') => ({
    type: 'button',
    action_id: actionId,
    text: { type: 'plain_text', text: label },
    value,
    ...(style ? { style } : {}),
  });
  return {
    type: 'actions',
    block_id: 'turnpike.approval',
    elements: [button(SLACK_ACTIONS.approve, 'Approve', 'primary'), button(SLACK_ACTIONS.deny, 'Deny', 'danger'), button(SLACK_ACTIONS.denyWithReason, 'Deny with reason')],
  };
}

/** The input as JSON in a code block, cut to fit one section. */
function inputText(input: unknown): string {
  const json = JSON.stringify(input === undefined ? null : input, null, 2) ?? 'null';
  // Three backticks in a string would close the code block early.
  const safe = json.replace(/`(?=`)/g, '`\u200b');
  const head = '*Input*\n```';
  const tail = '```';
  return `${head}${clipEscaped(safe, SECTION_TEXT_LIMIT - head.length - tail.length)}${tail}`;
}

/** Votes so far, escalation steps, delegations: one line each. */
function progressLines(notification: ApprovalNotification): string[] {
  const progress = notification.progress;
  if (!progress) return [];
  const lines: string[] = [];
  const approvals = progress.votes.filter((vote) => vote.approved).length;
  if (progress.quorum > 1 || progress.denials > 1 || progress.votes.length > 0) {
    const needed = progress.denials > 1 ? `, ${progress.denials} denials deny` : '';
    const who = progress.votes.map((vote) => `${escape(vote.approver ?? 'someone')} ${vote.approved ? 'approved' : `denied${vote.reason ? ` (${escape(vote.reason)})` : ''}`}`);
    lines.push(`*Votes:* ${approvals} of ${progress.quorum} approvals${needed}${who.length > 0 ? `: ${who.join(', ')}` : ''}`);
  }
  if (progress.excludedRequester !== undefined) lines.push(`The requester (${escape(progress.excludedRequester)}) may not vote.`);
  for (const step of progress.escalation ?? []) {
    const what = step.deny !== undefined ? `deny (${escape(step.deny)})` : `add ${approverSet(step.to)}`;
    lines.push(`*Escalation* after ${escape(step.after)}, ${slackDate(step.dueAt)}: ${what}${step.firedAt ? ' :arrow_right: done' : ''}`);
  }
  for (const delegation of progress.delegations ?? []) {
    lines.push(`*Delegated* by ${escape(delegation.from)} to ${approverSet(delegation.to)}: ${escape(delegation.reason)}`);
  }
  return lines;
}

function approverSet(set: ApproverSet | undefined): string {
  const names = [...(set?.approvers ?? []).map(escape), ...(set?.approverGroups ?? []).map((group) => `group ${escape(group)}`)];
  return names.length > 0 ? names.join(', ') : 'nobody';
}

function endingLine(notification: ApprovalNotification, word: string): string {
  const by = notification.approver ? ` by ${escape(notification.approver)}` : '';
  const at = notification.decidedAt ? ` at ${slackDate(notification.decidedAt)}` : '';
  const why = notification.decisionReason ? `: ${escape(notification.decisionReason)}` : '';
  return `*${word}*${by}${at}${why}`;
}

function fallback(notification: ApprovalNotification, ending: string | undefined): string {
  const tool = notification.toolName;
  if (ending) {
    const by = notification.approver ? ` by ${notification.approver}` : '';
    const why = notification.decisionReason ? `: ${notification.decisionReason}` : '';
    return cut(`${ending}${by}: ${tool} in turn ${notification.turnId}${why}`, 1000);
  }
  return cut(`Approval needed: ${tool} in turn ${notification.turnId}${notification.reason ? ` — ${notification.reason}` : ''} (decide by ${notification.expiresAt})`, 1000);
}

/** `<!date^…>`: shown in each reader's own time zone, with the ISO time as its fallback. */
export function slackDate(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return escape(iso);
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} at {time}|${escape(iso)}>`;
}

/** Slack's mrkdwn escapes: `&`, `<` and `>`, so no text of a turn becomes a link or a mention. */
export function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes `text` and cuts it to `limit` characters, never inside an escape or a surrogate pair. */
export function clipEscaped(text: string, limit: number): string {
  const escaped = escape(text);
  if (escaped.length <= limit) return escaped;
  const more = '…';
  let out = '';
  for (const char of text) {
    const next = escape(char);
    if (out.length + next.length > limit - more.length) return out + more;
    out += next;
  }
  return out;
}

/** Cuts mrkdwn already escaped (lines of our own) to a section's limit: at a line's end, else never inside an escape or a `<…>`. */
function clip(text: string): string {
  if (text.length <= SECTION_TEXT_LIMIT) return text;
  const head = cut(text, SECTION_TEXT_LIMIT - 1);
  const line = head.lastIndexOf('\n');
  return `${line > 0 ? head.slice(0, line) : head.replace(/&[a-z]*$/, '').replace(/<[^>]*$/, '')}…`;
}

/** The first `limit` UTF-16 units of `text`, without half a surrogate pair. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1]) ? limit - 1 : limit;
  return text.slice(0, end);
}
