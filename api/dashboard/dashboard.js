// turnpike approval dashboard: lists parked calls from the HTTP API and sends decisions.
// Plain browser JavaScript, no build step. Settings from the page URL:
//   ?interval=<ms>  refresh interval (default 1000)
const params = new URLSearchParams(location.search);
const REFRESH_MS = Number(params.get('interval') ?? 1000);
const TOKEN_KEY = 'turnpike.token';

const $ = (selector) => document.querySelector(selector);
const state = { token: localStorage.getItem(TOKEN_KEY), config: {}, cards: new Map(), deciding: new Set() };

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${state.token}`, ...(options.headers ?? {}) },
  });
  const body = await response.json().catch(() => ({}));
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

function fillCard(card, call) {
  card.querySelector('.tool').textContent = call.toolName;
  card.setAttribute('aria-label', `${call.kind === 'approval' ? 'Approval' : 'Client tool'}: ${call.toolName}, turn ${call.turnWorkflowId}`);
  card.querySelector('.kind').textContent = call.kind === 'approval' ? 'approval' : 'client tool';
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
  add('requested', `${duration(Date.now() - Date.parse(call.requestedAt))} ago`);
  card.querySelector('.policy-reason').textContent = call.reason ? `Why it needs you: ${call.reason}` : '';
  renderJson(card.querySelector('.input'), call.input);
  updateTimes(card, call);
}

function updateTimes(card, call) {
  const left = Date.parse(call.expiresAt) - Date.now();
  const element = card.querySelector('.left');
  element.textContent = left > 0 ? `${duration(left)} left` : 'expiring';
  element.classList.toggle('soon', left < 3_600_000);
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

/**
 * A form from the tool's JSON Schema: a field per property (text, number, checkbox, choice),
 * JSON for anything else. The browser checks the schema's simple rules; the turn validates the
 * edited input against the full schema again and refuses it if it fails.
 */
function buildEditor(card, call, schema) {
  const fields = card.querySelector('.edit-fields');
  if (fields.dataset.built) return;
  fields.dataset.built = 'yes';
  const properties = schema?.type === 'object' && schema.properties ? schema.properties : null;
  const original = call.input ?? {};
  const entries = properties ? Object.entries(properties) : [['(input)', {}]];
  for (const [name, property] of entries) {
    const label = document.createElement('label');
    label.className = 'edit-field';
    const caption = document.createElement('span');
    caption.textContent = name;
    let control;
    const value = properties ? original[name] : original;
    if (Array.isArray(property.enum)) {
      control = document.createElement('select');
      for (const option of property.enum) control.append(new Option(String(option), JSON.stringify(option), false, JSON.stringify(option) === JSON.stringify(value)));
    } else if (property.type === 'number' || property.type === 'integer') {
      control = document.createElement('input');
      control.type = 'number';
      control.step = property.type === 'integer' ? '1' : 'any';
      if (property.minimum !== undefined) control.min = property.minimum;
      if (property.maximum !== undefined) control.max = property.maximum;
      control.value = value ?? '';
    } else if (property.type === 'boolean') {
      control = document.createElement('input');
      control.type = 'checkbox';
      control.checked = value === true;
    } else if (property.type === 'string') {
      control = document.createElement('input');
      control.type = 'text';
      if (property.minLength !== undefined) control.minLength = property.minLength;
      if (property.maxLength !== undefined) control.maxLength = property.maxLength;
      control.value = value ?? '';
    } else {
      control = document.createElement('textarea');
      control.value = JSON.stringify(value ?? null, null, 2);
    }
    control.required = properties ? (schema.required ?? []).includes(name) : true;
    control.dataset.field = name;
    control.dataset.kind = control.type === 'checkbox' ? 'boolean' : control.tagName === 'SELECT' ? 'enum' : control.type === 'number' ? 'number' : control.tagName === 'TEXTAREA' ? 'json' : 'string';
    control.addEventListener('input', () => showDiff(card, call));
    label.append(caption, control);
    fields.append(label);
  }
}

/** The edited input, or undefined when nothing changed; throws when a field is not valid. */
function editedInput(card, call) {
  const controls = [...card.querySelectorAll('.edit-fields [data-field]')];
  if (controls.length === 0) return undefined;
  const read = (control) => {
    if (!control.checkValidity()) throw new Error(`${control.dataset.field}: ${control.validationMessage}`);
    switch (control.dataset.kind) {
      case 'boolean': return control.checked;
      case 'enum': return JSON.parse(control.value);
      case 'number': return control.value === '' ? undefined : Number(control.value);
      case 'json':
        try { return JSON.parse(control.value); } catch { throw new Error(`${control.dataset.field}: not valid JSON`); }
      default: return control.value;
    }
  };
  let input;
  if (controls.length === 1 && controls[0].dataset.field === '(input)') input = read(controls[0]);
  else {
    input = { ...(call.input ?? {}) };
    for (const control of controls) {
      const value = read(control);
      if (value === undefined) delete input[control.dataset.field];
      else input[control.dataset.field] = value;
    }
  }
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
  if (!approved && !reason && !confirm('Deny without a reason? The model will only learn that it was denied.')) return;
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

function removeCard(key) {
  const entry = state.cards.get(key);
  if (!entry) return;
  state.cards.delete(key);
  entry.card.classList.add('leaving');
  setTimeout(() => entry.card.remove(), 300);
}

function render(calls) {
  const approvals = calls.filter((call) => call.kind === 'approval');
  const clientCalls = calls.filter((call) => call.kind !== 'approval');
  const keyOf = (call) => call.approvalId ?? call.toolCallId;
  const present = new Set(calls.map(keyOf));
  for (const key of [...state.cards.keys()]) if (!present.has(key) && !state.deciding.has(key)) removeCard(key);
  for (const call of calls) {
    const key = keyOf(call);
    let entry = state.cards.get(key);
    if (!entry) {
      const card = $('#card-template').content.firstElementChild.cloneNode(true);
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
      }
      entry = { card, call };
      state.cards.set(key, entry);
      (call.kind === 'approval' ? $('#approvals') : $('#client-calls')).append(card);
      fillCard(card, call);
    } else {
      entry.call = call;
      updateTimes(entry.card, call);
    }
  }
  $('#approval-count').textContent = approvals.length;
  $('#client-count').textContent = clientCalls.length;
  $('#empty').hidden = approvals.length > 0;
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

async function refresh() {
  try {
    const { calls } = await api('/api/approvals');
    render(calls);
    $('#status').className = 'status live';
    $('#status').textContent = `live · updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    $('#status').className = 'status down';
    $('#status').textContent = error.status === 401 ? 'signed out' : `cannot reach turnpike: ${error.message}`;
    if (error.status === 401) showLogin();
  }
}

function showLogin() {
  $('#main').hidden = true;
  $('#login').hidden = false;
  $('#who').textContent = '';
}

async function start() {
  state.config = await fetch('/api/config').then((response) => response.json());
  try {
    const { identity } = await api('/api/me');
    $('#who').textContent = `signed in as ${identity}`;
  } catch {
    showLogin();
    return;
  }
  $('#login').hidden = true;
  $('#main').hidden = false;
  await refresh();
  await refreshDecisions();
  if (REFRESH_MS > 0) {
    setInterval(refresh, REFRESH_MS);
    setInterval(refreshDecisions, Math.max(REFRESH_MS * 10, 5_000));
  }
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

$('#login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  state.token = $('#token').value.trim();
  localStorage.setItem(TOKEN_KEY, state.token);
  start();
});

if (state.token) start();
else {
  fetch('/api/config').then((response) => response.json()).then((config) => (state.config = config));
  showLogin();
}
