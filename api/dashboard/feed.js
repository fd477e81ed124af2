// How the queue stays up to date: one Server-Sent Events stream (GET /api/approvals/events) whose
// messages are the listing, or polling when that stream cannot be opened. A 401 on the way has
// already brought the sign-in form up (requests.js); the feed only stops trying.
import { REFRESH_MS, showStatus, state } from './page.js';
import { api } from './requests.js';
import { PAGE_LIMIT, render } from './listing.js';
import { refreshDecisions } from './decisions.js';

export async function refresh() {
  try {
    render(await api(`/api/approvals?limit=${PAGE_LIMIT}`));
    showStatus(true, `live · updated ${new Date().toLocaleTimeString()}`);
  } catch (error) {
    showStatus(false, error.status === 401 ? 'signed out' : `cannot reach turnpike: ${error.message}`);
  }
}

/** Polls the listing (and, less often, the decisions): the fallback when the stream cannot be used. */
export function startPolling() {
  if (state.polling.length > 0 || REFRESH_MS <= 0) return;
  refresh();
  state.polling = [setInterval(refresh, REFRESH_MS), setInterval(refreshDecisions, Math.max(REFRESH_MS * 10, 5_000))];
}

export function stopPolling() {
  state.polling.forEach(clearInterval);
  state.polling = [];
}

/**
 * Opens the listing's event stream with a short-lived stream token (an EventSource cannot send
 * the bearer token). The browser reconnects by itself after a dropped connection; once the
 * stream is closed for good — the server refused it, say because the token in its URL expired —
 * the page polls and asks for a new token, backing off up to a minute between tries.
 */
export async function connectStream(failures = 0) {
  const retry = () => {
    startPolling();
    setTimeout(() => connectStream(failures + 1), Math.min(60_000, 1000 * 2 ** failures));
  };
  let url;
  try {
    ({ url } = await api('/api/approvals/stream-token', { method: 'POST', body: '{}' }));
  } catch (error) {
    if (error.status === 401) return;
    return retry();
  }
  const source = new EventSource(url);
  state.source = source;
  source.addEventListener('open', () => {
    failures = 0;
    stopPolling();
  });
  source.addEventListener('message', (event) => {
    // A call that left the listing was most likely decided: the trail has a new row.
    if (render(JSON.parse(event.data)) > 0) refreshDecisions();
    showStatus(true, `live · updated ${new Date().toLocaleTimeString()}`);
  });
  source.addEventListener('listing-error', (event) => showStatus(false, `cannot list parked calls: ${JSON.parse(event.data).message}`));
  source.addEventListener('error', () => {
    if (source.readyState !== EventSource.CLOSED) {
      showStatus(false, 'reconnecting…');
      return;
    }
    source.close();
    if (state.source === source) state.source = null;
    retry();
  });
}
