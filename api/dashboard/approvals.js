// Deciding an approval: the call's context, read on demand; the input, edited before approving;
// the decision sent with its reason. A budget approval is decided the same way, as an extension.
import { state, toast } from './page.js';
import { api } from './requests.js';
import { renderJson } from './format.js';
import { buildFields, readFields } from './schema-form.js';
import { removeCard } from './cards.js';
import { refreshDecisions } from './decisions.js';

/** The 409 refusals that mean the call is no longer waiting for anyone. */
const CLOSED = new Set(['ApprovalAlreadyDecided', 'ToolCallAlreadySettled', 'TurnAlreadyEnded']);

/** Loads the call's context once, when its panel is first opened. */
export async function showContext(card, call) {
  const body = card.querySelector('.context-body');
  if (card.dataset.contextLoaded) return;
  card.dataset.contextLoaded = 'yes';
  try {
    const context = await api(`/api/turns/${encodeURIComponent(call.turnWorkflowId)}/calls/${encodeURIComponent(call.toolCallId)}/context`);
    body.replaceChildren();
    const line = (label, text) => {
      const p = document.createElement('p');
      const strong = document.createElement('strong');
      strong.textContent = `${label}: `;
      p.append(strong, text || '(nothing)');
      body.append(p);
    };
    line('The user asked', context.userMessage);
    line('The model wrote', context.assistantText);
    for (const result of context.earlierResults) {
      const details = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = `Earlier: ${result.toolName} (${result.outcome}${result.isError ? ', error' : ''})`;
      const pre = document.createElement('pre');
      pre.className = 'input';
      renderJson(pre, result.output);
      details.append(summary, pre);
      body.append(details);
    }
    if (context.earlierResults.length === 0) line('Earlier tool results', 'none in this turn');
    buildEditor(card, call, context.inputSchema);
  } catch (error) {
    card.dataset.contextLoaded = '';
    body.textContent = `Could not load the context: ${error.message}`;
  }
}

/** The edit-before-approve form, built once from the tool's input schema. */
function buildEditor(card, call, schema) {
  const fields = card.querySelector('.edit-fields');
  if (fields.dataset.built) return;
  fields.dataset.built = 'yes';
  buildFields(fields, schema, call.input ?? {}, () => showDiff(card, call), false);
}

/** The edited input, or undefined when nothing changed; throws when a field is not valid. */
function editedInput(card, call) {
  const fields = card.querySelector('.edit-fields');
  if (!fields.querySelector('[data-field]')) return undefined;
  const input = readFields(fields, call.input);
  return JSON.stringify(input) === JSON.stringify(call.input) ? undefined : input;
}

function showDiff(card, call) {
  const list = card.querySelector('.edit-diff');
  list.replaceChildren();
  let input;
  try {
    input = editedInput(card, call);
  } catch (error) {
    const item = document.createElement('li');
    item.className = 'invalid';
    item.textContent = error.message;
    list.append(item);
    return;
  }
  if (!input || typeof input !== 'object') return;
  for (const key of new Set([...Object.keys(call.input ?? {}), ...Object.keys(input)])) {
    const before = JSON.stringify(call.input?.[key]);
    const after = JSON.stringify(input[key]);
    if (before === after) continue;
    const item = document.createElement('li');
    item.textContent = `${key}: ${before ?? '(none)'} → ${after ?? '(removed)'}`;
    list.append(item);
  }
}

export async function decide(card, call, approved) {
  const reason = card.querySelector('.reason').value.trim();
  let input;
  try {
    input = approved ? editedInput(card, call) : undefined;
  } catch (error) {
    toast(`Not approved: ${error.message}`, 'error');
    return;
  }
  if (!approved && !reason && call.kind !== 'budget' && !confirm('Deny without a reason? The model will only learn that it was denied.')) return;
  state.deciding.add(call.approvalId);
  card.querySelectorAll('button').forEach((button) => (button.disabled = true));
  try {
    const answer = await api(`/api/turns/${encodeURIComponent(call.turnWorkflowId)}/approvals/${encodeURIComponent(call.approvalId)}`, {
      method: 'POST',
      body: JSON.stringify({
        approved,
        inputHash: call.inputHash,
        ...(input !== undefined ? { input } : {}),
        ...(reason ? { reason } : {}),
        ...(call.decisionToken ? { decisionToken: call.decisionToken } : {}),
      }),
    });
    // A vote that decided nothing leaves the call parked for the next approver.
    const votes = answer?.votes;
    toast(`${votes && !votes.decided ? `Vote recorded (${votes.approvals} of ${votes.quorum})` : approved ? 'Approved' : 'Denied'} ${call.toolName}${input !== undefined ? ' (edited)' : ''}`, 'ok');
    refreshDecisions();
    removeCard(call.approvalId);
  } catch (error) {
    // A card this page listed was decided elsewhere, or its turn ended: the API answers 409 to one
    // who could decide it, 404 to whoever may not read the turn any more (docs/http-api.md).
    const gone = error.status === 404 || (error.status === 409 && CLOSED.has(error.type));
    const why = gone ? 'this approval is no longer open to you (decided elsewhere, or its turn ended)' : error.message;
    toast(`Not ${approved ? 'approved' : 'denied'}: ${why}`, 'error');
    if (error.status === 409 || error.status === 404) removeCard(call.approvalId);
    else card.querySelectorAll('button').forEach((button) => (button.disabled = false));
  } finally {
    state.deciding.delete(call.approvalId);
  }
}

/**
 * A budget approval: the turn reached a limit of its budget. Approve extends it by
 * `input.extendBy` (editable), deny stops the turn; it has no tool context to show.
 */
export function budgetCard(card, call, current) {
  card.querySelector('.context').remove();
  card.querySelector('.edit summary').textContent = 'Change how much to extend by';
  card.querySelector('.approve').textContent = 'Extend';
  card.querySelector('.deny').textContent = 'Stop the turn';
  card.querySelector('.reason').placeholder = 'Reason (kept in the audit trail)';
  card.querySelector('.decide').addEventListener('submit', (event) => {
    event.preventDefault();
    decide(card, current(), true);
  });
  card.querySelector('.deny').addEventListener('click', () => decide(card, current(), false));
  const schema = { type: 'object', properties: { extendBy: { type: 'object', title: 'Extend by' } }, required: ['extendBy'] };
  buildFields(card.querySelector('.edit-fields'), schema, call.input ?? {}, () => showDiff(card, current()), false);
}
