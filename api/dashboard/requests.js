// Requests to turnpike's HTTP API. Signed in by a session cookie (httpOnly: page scripts never
// see it), started at /auth/login (the identity provider) or by exchanging an API token at
// /auth/token. The page keeps no token; what it POSTs carries the session's CSRF token from
// GET /api/me.
import { state } from './page.js';

let sessionEnded = () => {};

/** Sets what the page does when turnpike no longer accepts the session (a 401): show the sign-in form. */
export function whenSessionEnds(handler) {
  sessionEnded = handler;
}

/** JSON in and out; a refused request throws an Error with the answer's `status` and error `type`. */
export async function api(path, options = {}) {
  const method = options.method ?? 'GET';
  const response = await fetch(path, {
    ...options,
    headers: { 'content-type': 'application/json', ...(method !== 'GET' && state.csrf ? { 'x-csrf-token': state.csrf } : {}), ...(options.headers ?? {}) },
  });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401 && path.startsWith('/api/')) sessionEnded('Your session has ended: sign in again.');
  if (!response.ok) {
    const error = new Error(body.error?.message ?? `HTTP ${response.status}`);
    error.status = response.status;
    error.type = body.error?.type;
    throw error;
  }
  return body;
}
