// Signing in and out: the page once signed in (who, the CSRF token, the session's end, the queue's
// feed), the sign-in form when the session ends, and the token form's exchange for a session.
import { $, params, REFRESH_MS, STREAM, state, showStatus, toast } from './page.js';
import { api } from './requests.js';
import { connectStream, refresh, startPolling, stopPolling } from './feed.js';
import { refreshDecisions } from './decisions.js';
import { showTurn } from './turn-view.js';
import { showEvaluation } from './evaluation-view.js';

/** The page for the signed-in caller, or the sign-in form when there is none. */
export async function start() {
  state.config = await fetch('/api/config').then((response) => response.json());
  try {
    const me = await api('/api/me');
    $('#who').textContent = `signed in as ${me.identity}`;
    state.csrf = me.csrfToken ?? null;
    // When the session ends, the next request would be refused: ask for a new sign-in then.
    clearTimeout(state.expiry);
    if (me.expiresAt) state.expiry = setTimeout(() => api('/api/me').catch(() => {}), Math.min(Date.parse(me.expiresAt) - Date.now() + 500, 2 ** 31 - 1));
  } catch {
    showLogin();
    return;
  }
  $('#sign-out').hidden = false;
  $('#login-message').textContent = '';
  $('#login').hidden = true;
  $('#main').hidden = false;
  if (params.get('turn')) await showTurn(params.get('turn'));
  if (params.get('evaluation')) await showEvaluation(params.get('evaluation'));
  // The queue first: the trail of decisions fills in beside it, not before it (with thousands of
  // turns parked it reads for seconds; docs/capacity.md, the dashboard's first paint).
  const decisions = refreshDecisions();
  // The stream's first message is the listing: no separate first request.
  if (STREAM) connectStream();
  else if (REFRESH_MS > 0) startPolling();
  else await refresh();
  await decisions;
}

/** The sign-in form in place of the page; the feed stops. `message` says why, to one who was signed in. */
export function showLogin(message = '') {
  const wasSignedIn = !$('#main').hidden;
  state.csrf = null;
  clearTimeout(state.expiry);
  state.source?.close();
  state.source = null;
  stopPolling();
  $('#main').hidden = true;
  $('#login').hidden = false;
  $('#sso').hidden = !state.config.login;
  if (wasSignedIn && message) $('#login-message').textContent = message;
  $('#sign-out').hidden = true;
  $('#who').textContent = '';
  if (wasSignedIn && message) showStatus(false, 'signed out');
}

export async function signOut() {
  await fetch('/auth/logout', { method: 'POST' }).catch(() => {});
  showLogin();
  showStatus(false, 'signed out');
}

/** The token form: the token buys a session cookie and is forgotten, nothing is kept in storage. */
export async function signInWithToken(event) {
  event.preventDefault();
  const token = $('#token').value.trim();
  $('#token').value = '';
  const response = await fetch('/auth/token', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(() => null);
  if (!response?.ok) {
    toast(response?.status === 401 ? 'This token is not accepted' : 'Cannot reach turnpike', 'error');
    return;
  }
  start();
}
