// One card per parked call: what it shows, its time left, and its leaving once the call is settled.
import { state } from './page.js';
import { duration, renderJson, workflowLink } from './format.js';
import { renderProgress } from './progress.js';

const KIND_LABELS = { approval: ['Approval', 'approval'], budget: ['Budget', 'budget'], elicitation: ['Question', 'question'], 'client-tool': ['Client tool', 'client tool'] };

export function fillCard(card, call) {
  const [kindTitle, kindBadge] = KIND_LABELS[call.kind] ?? KIND_LABELS['client-tool'];
  card.querySelector('.tool').textContent = call.toolName;
  card.setAttribute('aria-label', `${kindTitle}: ${call.toolName}, turn ${call.turnWorkflowId}`);
  card.querySelector('.kind').textContent = kindBadge;
  const meta = card.querySelector('.meta');
  meta.replaceChildren();
  const add = (label, value) => {
    const span = document.createElement('span');
    span.append(`${label} `);
    span.append(value ?? '');
    meta.append(span);
  };
  add('turn', workflowLink(call.turnWorkflowId) ?? call.turnWorkflowId);
  if (call.conversationId) add('conversation', call.conversationId);
  if (call.tenant) add('tenant', call.tenant);
  // A sub-agent's call: the turn whose agent tool call started this turn.
  if (call.parentTurnId) add('sub-agent of', workflowLink(call.parentTurnId) ?? call.parentTurnId);
  add('requested', `${duration(Date.now() - Date.parse(call.requestedAt))} ago`);
  const reason = card.querySelector('.policy-reason');
  if (reason) reason.textContent = call.reason ? `Why it needs you: ${call.reason}` : '';
  const message = card.querySelector('.message');
  if (message) message.textContent = call.message ?? '';
  const input = card.querySelector('.input');
  if (input) renderJson(input, call.input);
  renderProgress(card, call);
  updateTimes(card, call);
}

export function updateTimes(card, call) {
  const left = Date.parse(call.expiresAt) - Date.now();
  const element = card.querySelector('.left');
  element.textContent = left > 0 ? `${duration(left)} left` : 'expiring';
  element.classList.toggle('soon', left < 3_600_000);
}

export function removeCard(key) {
  const entry = state.cards.get(key);
  if (!entry) return;
  state.cards.delete(key);
  state.more.delete(key);
  entry.card.classList.add('leaving');
  setTimeout(() => entry.card.remove(), 300);
}

/** A card per parked call: an approval by its id, a server's question by its id (a retried call asks anew), else the call. */
export function keyOf(call) {
  return call.approvalId ?? call.elicitationId ?? call.toolCallId;
}
