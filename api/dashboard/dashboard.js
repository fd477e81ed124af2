// turnpike approval dashboard: lists parked calls from the HTTP API and sends decisions.
// Plain browser JavaScript, no build step. The listing arrives on one Server-Sent Events stream
// (GET /api/approvals/events); when that stream cannot be opened the page polls instead.
// Settings from the page URL:
//   ?interval=<ms>  polling interval when the stream is unavailable (default 1000); 0: load once, no updates
//   ?stream=0       poll, never open the stream
//   ?turn=<id>      also show that turn: its status, step and parked calls, if the caller may read it
const params = new URLSearchParams(location.search);
const REFRESH_MS = Number(params.get('interval') ?? 1000);
const STREAM = params.get('stream') !== '0' && REFRESH_MS > 0 && typeof EventSource === 'function';
// Signed in by a session cookie (httpOnly: page scripts never see it), started at /auth/login
// (the identity provider) or by exchanging an API token at /auth/token. The page keeps no token;
// what it POSTs carries the session's CSRF token from GET /api/me.

const $ = (selector) => document.querySelector(selector);
const state = { csrf: null, expiry: null, config: {}, cards: new Map(), deciding: new Set(), polling: [], source: null };

async function api(path, options = {}) {
  const method = options.method ?? 'GET';
  const response = await fetch(path, {
    ...options,
    headers: { 'content-type': 'application/json', ...(method !== 'GET' && state.csrf ? { 'x-csrf-token': state.csrf } : {}), ...(options.headers ?? {}) },
  });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401 && path.startsWith('/api/')) showLogin('Your session has ended: sign in again.');
  if (!response.ok) {
    const error = new Error(body.error?.message ?? `HTTP ${response.status}`);
    error.status = response.status;
    error.type = body.error?.type;
    throw error;
  }
  return body;
}

function toast(message, kind = 'info') {
  const element = document.createElement('div');
  element.className = `toast ${kind}`;
  element.textContent = message;
  $('#toasts').append(element);
  setTimeout(() => element.remove(), 6000);
}

function duration(ms) {
  const abs = Math.abs(ms);
  const units = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];
  const parts = [];
  let rest = abs;
  for (const [unit, size] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join(' ') || '0s';
}

/** Pretty-printed JSON with token colours, built from text nodes (never innerHTML from data). */
function renderJson(pre, value) {
  pre.replaceChildren();
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const pattern = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    pre.append(text.slice(last, match.index));
    const span = document.createElement('span');
    span.className = match[1] ? (match[2] ? 'k' : 's') : match[3] ? 'b' : 'n';
    span.textContent = match[1] ?? match[0];
    pre.append(span);
    if (match[2]) pre.append(match[2]);
    last = match.index + match[0].length;
  }
  pre.append(text.slice(last));
}

function workflowLink(turnId) {
  if (!state.config.temporalUiUrl) return null;
  const link = document.createElement('a');
  link.href = `${state.config.temporalUiUrl}/namespaces/${encodeURIComponent(state.config.namespace)}/workflows/${encodeURIComponent(turnId)}`;
  link.target = '_blank';
  link.rel = 'noopener';
  link.textContent = turnId;
  return link;
}

const KIND_LABELS = { approval: ['Approval', 'approval'], budget: ['Budget', 'budget'], elicitation: ['Question', 'question'], 'client-tool': ['Client tool', 'client tool'] };

function fillCard(card, call) {
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
  // A sub-agent's call: the turn whose agent tool call started this turn.
  if (call.parentTurnId) add('sub-agent of', workflowLink(call.parentTurnId) ?? call.parentTurnId);
  add('requested', `${duration(Date.now() - Date.parse(call.requestedAt))} ago`);
  const reason = card.querySelector('.policy-reason');
  if (reason) reason.textContent = call.reason ? `Why it needs you: ${call.reason}` : '';
  const message = card.querySelector('.message');
  if (message) message.textContent = call.message ?? '';
  const input = card.querySelector('.input');
  if (input) renderJson(input, call.input);
  updateTimes(card, call);
}

function updateTimes(card, call) {
  const left = Date.parse(call.expiresAt) - Date.now();
  const element = card.querySelector('.left');
  element.textContent = left > 0 ? `${duration(left)} left` : 'expiring';
  element.classList.toggle('soon', left < 3_600_000);
}

/**
 * A budget approval: the turn reached a limit of its budget. Approve extends it by
 * `input.extendBy` (editable), deny stops the turn; it has no tool context to show.
 */
function budgetCard(card, call, current) {
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

// ---- context and edit-before-approve -------------------------------------------------------

/** Loads the call's context once, when its panel is first opened. */
async function showContext(card, call) {
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

let fieldIds = 0;

/** A property's choices as [value, label] pairs: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `const`s with titles. */
function choicesOf(property) {
  if (!property || typeof property !== 'object') return null;
  if (Array.isArray(property.enum)) return property.enum.map((value, index) => [value, String(property.enumNames?.[index] ?? value)]);
  const alternatives = property.oneOf ?? property.anyOf;
  if (Array.isArray(alternatives) && alternatives.length > 0 && alternatives.every((option) => option && 'const' in option)) {
    return alternatives.map((option) => [option.const, String(option.title ?? option.const)]);
  }
  return null;
}

/**
 * A form from a JSON Schema, into `fields`: a field per property (text — typed by `format` as
 * email, URL or date —, number, checkbox, choice, several choices), JSON for anything else; the
 * values start from `original`, else (with `useDefaults`) the property's `default`. Used for the edit-before-approve
 * form (a tool's input schema) and for an MCP server's question (its requested schema). The
 * browser checks the schema's simple rules; the turn validates against the full schema again and
 * refuses what fails.
 */
function buildFields(fields, schema, original, onInput, useDefaults) {
  const properties = schema?.type === 'object' && schema.properties ? schema.properties : null;
  const entries = properties ? Object.entries(properties) : [['(input)', {}]];
  for (const [name, property] of entries) {
    const label = document.createElement('label');
    label.className = 'edit-field';
    const caption = document.createElement('span');
    caption.textContent = property.title && property.title !== name ? `${property.title} (${name})` : name;
    let control;
    const value = properties ? (original[name] ?? (useDefaults ? property.default : undefined)) : original;
    const required = properties ? (schema.required ?? []).includes(name) : true;
    const choices = choicesOf(property);
    const itemChoices = property.type === 'array' ? choicesOf(property.items) : null;
    let kind;
    if (choices) {
      kind = 'enum';
      control = document.createElement('select');
      if (!required) control.append(new Option('(none)', '', false, value === undefined));
      for (const [option, text] of choices) control.append(new Option(text, JSON.stringify(option), false, JSON.stringify(option) === JSON.stringify(value)));
    } else if (itemChoices) {
      kind = 'enums';
      control = document.createElement('select');
      control.multiple = true;
      control.size = Math.min(itemChoices.length, 5);
      const chosen = new Set((Array.isArray(value) ? value : []).map((item) => JSON.stringify(item)));
      for (const [option, text] of itemChoices) control.append(new Option(text, JSON.stringify(option), false, chosen.has(JSON.stringify(option))));
      control.dataset.minItems = property.minItems ?? '';
      control.dataset.maxItems = property.maxItems ?? '';
    } else if (property.type === 'number' || property.type === 'integer') {
      kind = 'number';
      control = document.createElement('input');
      control.type = 'number';
      control.step = property.type === 'integer' ? '1' : 'any';
      if (property.minimum !== undefined) control.min = property.minimum;
      if (property.maximum !== undefined) control.max = property.maximum;
      control.value = value ?? '';
    } else if (property.type === 'boolean') {
      kind = 'boolean';
      control = document.createElement('input');
      control.type = 'checkbox';
      control.checked = value === true;
    } else if (property.type === 'string') {
      kind = 'string';
      control = document.createElement('input');
      control.type = { email: 'email', uri: 'url', date: 'date' }[property.format] ?? 'text';
      if (property.format === 'date-time') {
        control.placeholder = 'YYYY-MM-DDThh:mm:ssZ';
        control.pattern = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+\\-]\\d{2}:\\d{2})';
      }
      if (property.minLength !== undefined) control.minLength = property.minLength;
      if (property.maxLength !== undefined) control.maxLength = property.maxLength;
      control.value = value ?? '';
      // An optional field left empty is left out, rather than sent as "" (which fails a format).
      if (!required && (properties ? original[name] : original) === undefined) control.dataset.omitEmpty = 'yes';
    } else {
      kind = 'json';
      control = document.createElement('textarea');
      control.value = JSON.stringify(value ?? null, null, 2);
    }
    control.required = required && kind !== 'boolean';
    control.dataset.field = name;
    control.dataset.kind = kind;
    control.addEventListener('input', onInput);
    control.addEventListener('change', onInput);
    label.append(caption, control);
    if (property.description) {
      const hint = document.createElement('span');
      hint.className = 'hint';
      hint.id = `field-hint-${++fieldIds}`;
      hint.textContent = property.description;
      control.setAttribute('aria-describedby', hint.id);
      label.append(hint);
    }
    fields.append(label);
  }
}

/** The form's value over `base` (fields left empty are removed); throws when a field is not valid. */
function readFields(fields, base) {
  const controls = [...fields.querySelectorAll('[data-field]')];
  const read = (control) => {
    if (!control.checkValidity()) throw new Error(`${control.dataset.field}: ${control.validationMessage}`);
    switch (control.dataset.kind) {
      case 'boolean': return control.checked;
      case 'enum': return control.value === '' ? undefined : JSON.parse(control.value);
      case 'enums': {
        const chosen = [...control.selectedOptions].map((option) => JSON.parse(option.value));
        const { minItems, maxItems } = control.dataset;
        if (chosen.length === 0 && !control.required) return undefined;
        if (minItems !== '' && chosen.length < Number(minItems)) throw new Error(`${control.dataset.field}: choose at least ${minItems}`);
        if (maxItems !== '' && chosen.length > Number(maxItems)) throw new Error(`${control.dataset.field}: choose at most ${maxItems}`);
        return chosen;
      }
      case 'number': return control.value === '' ? undefined : Number(control.value);
      case 'json':
        try { return JSON.parse(control.value); } catch { throw new Error(`${control.dataset.field}: not valid JSON`); }
      default: return control.value === '' && control.dataset.omitEmpty ? undefined : control.value;
    }
  };
  if (controls.length === 1 && controls[0].dataset.field === '(input)') return read(controls[0]);
  const value = { ...(base ?? {}) };
  for (const control of controls) {
    const field = read(control);
    if (field === undefined) delete value[control.dataset.field];
    else value[control.dataset.field] = field;
  }
  return value;
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

async function decide(card, call, approved) {
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
    await api(`/api/turns/${encodeURIComponent(call.turnWorkflowId)}/approvals/${encodeURIComponent(call.approvalId)}`, {
      method: 'POST',
      body: JSON.stringify({
        approved,
        inputHash: call.inputHash,
        ...(input !== undefined ? { input } : {}),
        ...(reason ? { reason } : {}),
        ...(call.decisionToken ? { decisionToken: call.decisionToken } : {}),
      }),
    });
    toast(`${approved ? 'Approved' : 'Denied'} ${call.toolName}${input !== undefined ? ' (edited)' : ''}`, 'ok');
    refreshDecisions();
    removeCard(call.approvalId);
  } catch (error) {
    toast(`Not ${approved ? 'approved' : 'denied'}: ${error.message}`, 'error');
    if (error.status === 409 || error.status === 404) removeCard(call.approvalId);
    else card.querySelectorAll('button').forEach((button) => (button.disabled = false));
  } finally {
    state.deciding.delete(call.approvalId);
  }
}

// ---- questions from MCP servers (elicitation) ---------------------------------------------

/** Shows what is wrong with the answer under the form (and says so to screen readers). */
function showProblem(card, message) {
  const list = card.querySelector('.answer-problems');
  list.replaceChildren();
  if (!message) return;
  const item = document.createElement('li');
  item.className = 'invalid';
  item.textContent = message;
  list.append(item);
}

/** Answers a server's question: `accept` with the form's content, `decline` or `cancel` (MCP's three actions). */
async function answerQuestion(card, call, action) {
  const key = keyOf(call);
  let output = { action };
  if (action === 'accept') {
    try {
      output = { action, content: readFields(card.querySelector('.edit-fields'), {}) };
    } catch (error) {
      showProblem(card, error.message);
      return;
    }
  }
  showProblem(card, '');
  state.deciding.add(key);
  card.querySelectorAll('button').forEach((button) => (button.disabled = true));
  try {
    await api(`/api/turns/${encodeURIComponent(call.turnWorkflowId)}/tool-results/${encodeURIComponent(call.toolCallId)}`, { method: 'POST', body: JSON.stringify({ output }) });
    toast(`${{ accept: 'Answered', decline: 'Declined', cancel: 'Cancelled' }[action]} ${call.toolName}`, 'ok');
    removeCard(key);
  } catch (error) {
    // An answer that fails the requested schema can be corrected; one too late cannot.
    showProblem(card, `Not sent: ${error.message}`);
    if (error.status === 404 || error.type === 'ToolCallAlreadySettled' || error.type === 'TurnAlreadyEnded') removeCard(key);
    else card.querySelectorAll('button').forEach((button) => (button.disabled = false));
  } finally {
    state.deciding.delete(key);
  }
}

function removeCard(key) {
  const entry = state.cards.get(key);
  if (!entry) return;
  state.cards.delete(key);
  entry.card.classList.add('leaving');
  setTimeout(() => entry.card.remove(), 300);
}

/** A card per parked call: an approval by its id, a server's question by its id (a retried call asks anew), else the call. */
function keyOf(call) {
  return call.approvalId ?? call.elicitationId ?? call.toolCallId;
}

const LISTS = { approval: '#approvals', budget: '#approvals', elicitation: '#questions', 'client-tool': '#client-calls' };

/** Shows the listing; returns how many cards left it (their calls were decided or answered elsewhere). */
function render(calls) {
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
      updateTimes(entry.card, call);
    }
  }
  $('#approval-count').textContent = approvals.length;
  $('#question-count').textContent = questions.length;
  $('#client-count').textContent = clientCalls.length;
  $('#empty').hidden = approvals.length > 0;
  return removed;
}

/** The audit trail's newest entries (GET /api/decisions), refreshed less often than the queue. */
async function refreshDecisions() {
  try {
    const { decisions } = await api('/api/decisions?limit=20');
    const rows = decisions.map((decision) => {
      const row = document.createElement('tr');
      row.dataset.approvalId = decision.approvalId;
      const by = decision.automatic ? 'policy' : (decision.approver ?? '');
      const reason = `${decision.reason ?? ''}${decision.editedInput !== undefined ? ` (input edited)` : ''}`;
      for (const text of [new Date(decision.decidedAt).toLocaleString(), decision.toolName, decision.outcome, by, reason, decision.turnWorkflowId]) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      row.children[2].className = decision.approved ? 'outcome ok' : 'outcome bad';
      return row;
    });
    $('#decisions tbody').replaceChildren(...rows);
  } catch {
    // The queue's status line already says when turnpike cannot be reached.
  }
}

function showStatus(live, text) {
  $('#status').className = `status ${live ? 'live' : 'down'}`;
  $('#status').textContent = text;
}

async function refresh() {
  try {
    const { calls } = await api('/api/approvals');
    render(calls);
    showStatus(true, `live · updated ${new Date().toLocaleTimeString()}`);
  } catch (error) {
    showStatus(false, error.status === 401 ? 'signed out' : `cannot reach turnpike: ${error.message}`);
    if (error.status === 401) showLogin();
  }
}

/** Polls the listing (and, less often, the decisions): the fallback when the stream cannot be used. */
function startPolling() {
  if (state.polling.length > 0 || REFRESH_MS <= 0) return;
  refresh();
  state.polling = [setInterval(refresh, REFRESH_MS), setInterval(refreshDecisions, Math.max(REFRESH_MS * 10, 5_000))];
}

function stopPolling() {
  state.polling.forEach(clearInterval);
  state.polling = [];
}

/**
 * Opens the listing's event stream with a short-lived stream token (an EventSource cannot send
 * the bearer token). The browser reconnects by itself after a dropped connection; once the
 * stream is closed for good — the server refused it, say because the token in its URL expired —
 * the page polls and asks for a new token, backing off up to a minute between tries.
 */
async function connectStream(failures = 0) {
  const retry = () => {
    startPolling();
    setTimeout(() => connectStream(failures + 1), Math.min(60_000, 1000 * 2 ** failures));
  };
  let url;
  try {
    ({ url } = await api('/api/approvals/stream-token', { method: 'POST', body: '{}' }));
  } catch (error) {
    if (error.status === 401) return showLogin();
    return retry();
  }
  const source = new EventSource(url);
  state.source = source;
  source.addEventListener('open', () => {
    failures = 0;
    stopPolling();
  });
  source.addEventListener('message', (event) => {
    const { calls } = JSON.parse(event.data);
    // A call that left the listing was most likely decided: the trail has a new row.
    if (render(calls) > 0) refreshDecisions();
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

function showLogin(message = '') {
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

async function signOut() {
  await fetch('/auth/logout', { method: 'POST' }).catch(() => {});
  showLogin();
  showStatus(false, 'signed out');
}

/**
 * One turn, by its id in the page URL: what GET /api/turns/:id answers. A turn the caller may not
 * read is answered as one that does not exist (404), and the page says only that.
 */
async function showTurn(turnId) {
  $('#turn-view').hidden = false;
  $('#turn-id').textContent = turnId;
  try {
    const { state: turn } = await api(`/api/turns/${encodeURIComponent(turnId)}`);
    $('#turn-status').textContent = turn.status;
    $('#turn-step').textContent = String(turn.step);
    $('#turn-facts').hidden = false;
    if (turn.pending.length > 0) {
      renderJson($('#turn-pending'), turn.pending.map(({ toolName, input, kind }) => ({ toolName, kind, input })));
      $('#turn-pending').hidden = false;
    }
  } catch (error) {
    $('#turn-missing').textContent = error.status === 404 ? 'No such turn was found.' : `The turn could not be read: ${error.message}`;
    $('#turn-missing').hidden = false;
  }
}

async function start() {
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
  await refreshDecisions();
  // The stream's first message is the listing: no separate first request.
  if (STREAM) connectStream();
  else if (REFRESH_MS > 0) startPolling();
  else await refresh();
}

// ---- keyboard ------------------------------------------------------------------------------
// j/k (or the arrows) move between approval cards, a approves, d denies, r focuses the reason,
// ? shows the help. Letters are ignored while typing in a field; Escape leaves it.

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

document.addEventListener('keydown', (event) => {
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
});

$('#help-button').addEventListener('click', () => toggleHelp(true));
$('#shortcuts-close').addEventListener('click', () => toggleHelp(false));

// The token buys a session cookie and is forgotten: nothing is kept in storage.
$('#login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = $('#token').value.trim();
  $('#token').value = '';
  const response = await fetch('/auth/token', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(() => null);
  if (!response?.ok) {
    toast(response?.status === 401 ? 'This token is not accepted' : 'Cannot reach turnpike', 'error');
    return;
  }
  start();
});
$('#sign-out').addEventListener('click', signOut);

start();
