// The queue: the listing of parked calls shown as cards, approvals, questions and client-tool
// calls each in their list, soonest-expiring first, kept in step with every new first page; "Show
// more" adds the pages after it (GET /api/approvals?after=), which stay until decided or reloaded.
import { $, state, toast } from './page.js';
import { api } from './requests.js';
import { buildFields } from './schema-form.js';
import { fillCard, keyOf, removeCard, updateTimes } from './cards.js';
import { renderProgress } from './progress.js';
import { budgetCard, decide, showContext } from './approvals.js';
import { answerQuestion, showProblem } from './questions.js';

/** Turns per page, as the live feed's (api/parked-listing.ts, FEED_PAGE_LIMIT). */
export const PAGE_LIMIT = 100;

const LISTS = { approval: '#approvals', budget: '#approvals', elicitation: '#questions', 'client-tool': '#client-calls' };

/**
 * Shows a page of the listing: the first (the feed's, or a poll's), whose cards replace the first
 * page's before, or with `more` a later one, added. Returns how many cards left (their calls were
 * decided or answered elsewhere).
 */
export function render({ calls, next }, more = false) {
  let removed = 0;
  if (more) {
    for (const call of calls) state.more.add(keyOf(call));
    state.moreNext = next ?? null;
    state.loadedMore = true;
  } else {
    const present = new Set(calls.map(keyOf));
    for (const key of [...state.cards.keys()]) {
      if (!present.has(key) && !state.deciding.has(key) && !state.more.has(key)) {
        removeCard(key);
        removed++;
      }
    }
    state.firstNext = next ?? null;
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
      // Before the first card that expires later: the list stays soonest-expiring first.
      const list = $(LISTS[call.kind] ?? '#client-calls');
      const later = [...list.children].find((other) => (state.cards.get(other.dataset.key)?.call.expiresAt ?? '') > call.expiresAt);
      state.cards.set(key, entry);
      list.insertBefore(card, later ?? null);
      fillCard(card, call);
    } else {
      entry.call = call;
      renderProgress(entry.card, call);
      updateTimes(entry.card, call);
    }
  }
  const shown = [...state.cards.values()].map((entry) => entry.call.kind);
  const approvals = shown.filter((kind) => kind === 'approval' || kind === 'budget').length;
  $('#approval-count').textContent = approvals;
  $('#question-count').textContent = shown.filter((kind) => kind === 'elicitation').length;
  $('#client-count').textContent = shown.filter((kind) => kind === 'client-tool').length;
  $('#empty').hidden = approvals > 0;
  $('#show-more').hidden = !(state.loadedMore ? state.moreNext : state.firstNext);
  return removed;
}

/** Loads the page after the last one shown. */
export async function showMore() {
  const cursor = state.loadedMore ? state.moreNext : state.firstNext;
  if (!cursor) return;
  const button = $('#show-more');
  button.disabled = true;
  try {
    render(await api(`/api/approvals?limit=${PAGE_LIMIT}&after=${encodeURIComponent(cursor)}`), true);
  } catch (error) {
    toast(`Could not load more: ${error.message}`, 'error');
  } finally {
    button.disabled = false;
  }
}
