// What every part of the dashboard shares: the settings from the page URL, the page's state, and
// the small ways it speaks to the person (a toast, the status line).
// Settings from the page URL:
//   ?interval=<ms>  polling interval when the stream is unavailable (default 1000); 0: load once, no updates
//   ?stream=0       poll, never open the stream
//   ?turn=<id>      also show that turn: its status, step and parked calls, if the caller may read it
//   ?evaluation=<id> also show that evaluation run's report, if the caller started it (or is an admin)
export const params = new URLSearchParams(location.search);
export const REFRESH_MS = Number(params.get('interval') ?? 1000);
export const STREAM = params.get('stream') !== '0' && REFRESH_MS > 0 && typeof EventSource === 'function';

export const $ = (selector) => document.querySelector(selector);
// firstNext: the cursor after the first page; more: the cards "Show more" loaded, moreNext: the cursor after them.
export const state = { csrf: null, expiry: null, config: {}, cards: new Map(), deciding: new Set(), polling: [], source: null, firstNext: null, more: new Set(), moreNext: null, loadedMore: false };

export function toast(message, kind = 'info') {
  const element = document.createElement('div');
  element.className = `toast ${kind}`;
  element.textContent = message;
  $('#toasts').append(element);
  setTimeout(() => element.remove(), 6000);
}

export function showStatus(live, text) {
  $('#status').className = `status ${live ? 'live' : 'down'}`;
  $('#status').textContent = text;
}
