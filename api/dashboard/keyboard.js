// The keyboard: j/k (or the arrows) move between approval cards, a approves, d denies, r focuses
// the reason, ? shows the help. Letters are ignored while typing in a field; Escape leaves it.
import { $, state } from './page.js';
import { decide } from './approvals.js';

function approvalCards() {
  return [...document.querySelectorAll('#approvals .card:not(.leaving)')];
}

function selectedCard() {
  return document.activeElement?.closest?.('#approvals .card') ?? null;
}

function moveSelection(step) {
  const cards = approvalCards();
  if (cards.length === 0) return;
  const index = cards.indexOf(selectedCard());
  const next = index === -1 ? (step > 0 ? 0 : cards.length - 1) : Math.min(cards.length - 1, Math.max(0, index + step));
  cards[next].focus();
  cards[next].scrollIntoView({ block: 'nearest' });
}

function toggleHelp(show = $('#shortcuts').hidden) {
  $('#shortcuts').hidden = !show;
  if (show) $('#shortcuts-close').focus();
}

/** A shortcut's action, on the selected card or the page. */
function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLSelectElement;
  if (event.key === 'Escape') {
    if (!$('#shortcuts').hidden) toggleHelp(false);
    else if (typing) event.target.closest('.card')?.focus();
    return;
  }
  if (typing || $('#main').hidden) return;
  const entry = state.cards.get(selectedCard()?.dataset.key);
  const actions = {
    j: () => moveSelection(1),
    ArrowDown: () => moveSelection(1),
    k: () => moveSelection(-1),
    ArrowUp: () => moveSelection(-1),
    '?': () => toggleHelp(),
    a: () => entry && decide(entry.card, entry.call, true),
    d: () => entry && decide(entry.card, entry.call, false),
    r: () => entry?.card.querySelector('.reason').focus(),
  };
  const action = actions[event.key];
  if (!action) return;
  event.preventDefault();
  action();
}

/** Listens for the shortcuts, and opens and closes their help. */
export function listenForShortcuts() {
  document.addEventListener('keydown', onKey);
  $('#help-button').addEventListener('click', () => toggleHelp(true));
  $('#shortcuts-close').addEventListener('click', () => toggleHelp(false));
}
