// turnpike approval dashboard: lists parked calls from the HTTP API and sends decisions.
// Plain browser JavaScript, no build step: ES modules, each one part of the page, which the server
// serves beside this one (api/server.ts, DASHBOARD_FILES). The listing arrives on one Server-Sent
// Events stream (GET /api/approvals/events); when that stream cannot be opened the page polls
// instead (feed.js). The settings the page URL takes are in page.js.
import { $ } from './page.js';
import { whenSessionEnds } from './requests.js';
import { listenForShortcuts } from './keyboard.js';
import { showLogin, signInWithToken, signOut, start } from './session.js';
import { showMore } from './listing.js';

whenSessionEnds(showLogin);
listenForShortcuts();
$('#login-form').addEventListener('submit', signInWithToken);
$('#sign-out').addEventListener('click', signOut);
$('#show-more').addEventListener('click', showMore);

start();
