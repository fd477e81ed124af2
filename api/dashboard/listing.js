// The queue: the listing of parked calls shown as cards, approvals, questions and client-tool
// calls each in their list, kept in step with every new listing.
import { $, state } from './page.js';
import { buildFields } from './schema-form.js';
import { fillCard, keyOf, removeCard, updateTimes } from './cards.js';
import { renderProgress } from './progress.js';
import { budgetCard, decide, showContext } from './approvals.js';
import { answerQuestion, showProblem } from './questions.js';

const LISTS = { approval: '#approvals', budget: '#approvals', elicitation: '#questions', 'client-tool': '#client-calls' };

/** Shows the listing; returns how many cards left it (their calls were decided or answered elsewhere). */
export function render(calls) {
  const approvals = calls.filter((call) => call.kind === 'approval' || call.kind === 'budget');
  const questions = calls.filter((call) => call.kind === 'elicitation');
  const clientCalls = calls.filter((call) => call.kind === 'client-tool');
  const present = new Set(calls.map(keyOf));
  let removed = 0;
  for (const key of [...state.cards.keys()]) {
    if (!present.has(key) && !state.deciding.has(key)) {
      removeCard(key);
      removed++;
    }
  }
  for (const call of calls) {
    const key = keyOf(call);
    let entry = state.cards.get(key);
    if (!entry) {
      const card = $(call.kind === 'elicitation' ? '#question-template' : '#card-template').content.firstElementChild.cloneNode(true);
      card.dataset.key = key;
      card.dataset.tool = call.toolName;
      if (call.kind === 'approval') {
        card.querySelector('.decide').addEventListener('submit', (event) => {
          event.preventDefault();
          decide(card, entry.call, true);
        });
        card.querySelector('.deny').addEventListener('click', () => decide(card, entry.call, false));
        card.querySelector('.context').addEventListener('toggle', (event) => event.target.open && showContext(card, entry.call));
        card.querySelector('.edit').addEventListener('toggle', (event) => event.target.open && showContext(card, entry.call));
      } else if (call.kind === 'budget') {
        budgetCard(card, call, () => entry.call);
      } else if (call.kind === 'elicitation') {
        buildFields(card.querySelector('.edit-fields'), call.requestedSchema, {}, () => showProblem(card, ''), true);
        card.querySelector('.answer').addEventListener('submit', (event) => {
          event.preventDefault();
          answerQuestion(card, entry.call, 'accept');
        });
        card.querySelector('.decline').addEventListener('click', () => answerQuestion(card, entry.call, 'decline'));
        card.querySelector('.cancel').addEventListener('click', () => answerQuestion(card, entry.call, 'cancel'));
      }
      entry = { card, call };
      state.cards.set(key, entry);
      $(LISTS[call.kind] ?? '#client-calls').append(card);
      fillCard(card, call);
    } else {
      entry.call = call;
      renderProgress(entry.card, call);
      updateTimes(entry.card, call);
    }
  }
  $('#approval-count').textContent = approvals.length;
  $('#question-count').textContent = questions.length;
  $('#client-count').textContent = clientCalls.length;
  $('#empty').hidden = approvals.length > 0;
  return removed;
}
