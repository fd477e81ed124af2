/**
 * A framework-free useChat client for tests (not shipped): the `ai` package's own `AbstractChat`
 * with `DefaultChatTransport`, as `useChat` configures it for tool approvals, rendering the chat's
 * messages into the DOM. Bundled for the browser by esbuild at test time.
 *
 * The page is opened as /ui-chat/?chat=<conversation id>&token=<bearer token> on the API's origin,
 * or without `token` by a browser signed in with a session cookie (POST /auth/token, /auth/login);
 * `&body=<json>` adds fields to every request's body (useChat's `body`: `budget`, `output`).
 */
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';

const params = new URLSearchParams(location.search);
const messagesList = document.getElementById('messages');
const statusLine = document.getElementById('status');
let chat;
window.shownTexts = {};
/** Every state of a `data-output` part the page rendered, in order. */
window.shownOutputs = [];

/** The chat state `useChat` keeps in React, kept here in plain fields; every change re-renders. */
class DomChatState {
  #messages = [];
  #status = 'ready';
  #error = undefined;
  get messages() { return this.#messages; }
  set messages(messages) { this.#messages = messages; render(); }
  get status() { return this.#status; }
  set status(status) { this.#status = status; render(); }
  get error() { return this.#error; }
  set error(error) { this.#error = error; render(); }
  pushMessage(message) { this.messages = [...this.#messages, message]; }
  popMessage() { this.messages = this.#messages.slice(0, -1); }
  replaceMessage(index, message) { this.messages = this.#messages.map((old, i) => (i === index ? message : old)); }
  snapshot(thing) { return structuredClone(thing); }
}

class DomChat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new DomChatState() });
  }
}

function element(tag, attributes, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** What an app does to decide a budget approval: the part set to `responded`, then `sendMessage()`. */
function decideBudget(approvalId, response) {
  chat.messages = chat.messages.map((message) => ({
    ...message,
    parts: message.parts.map((part) => (part.type === 'data-budget' && part.id === approvalId ? { ...part, data: { ...part.data, state: 'responded', response } } : part)),
  }));
  void chat.sendMessage();
}

function renderBudget(part) {
  const budget = element('div', { class: 'budget', 'data-state': part.data.state, 'data-approval-id': part.id });
  budget.append(element('code', { class: 'budget-extend-by' }, JSON.stringify(part.data.extendBy ?? part.data.input.extendBy)));
  if (part.data.state === 'requested') {
    const extend = element('button', { type: 'button', class: 'extend' }, 'Extend');
    extend.addEventListener('click', () => decideBudget(part.id, { approved: true, extendBy: { totalTokens: 1000 } }));
    const stop = element('button', { type: 'button', class: 'stop' }, 'Stop');
    stop.addEventListener('click', () => decideBudget(part.id, { approved: false, reason: 'Stopped in the page' }));
    budget.append(extend, stop);
  }
  if (part.data.state === 'decided') budget.append(element('span', { class: 'budget-outcome' }, part.data.outcome));
  return budget;
}

function renderPart(part) {
  if (part.type === 'text') return element('p', { class: 'text' }, part.text);
  if (part.type === 'data-budget') return renderBudget(part);
  if (part.type === 'data-output') {
    const { state, partial, output, errors } = part.data;
    if (JSON.stringify(window.shownOutputs.at(-1)) !== JSON.stringify(part.data)) window.shownOutputs.push(structuredClone(part.data));
    return element('pre', { class: 'output', 'data-state': state }, JSON.stringify(output ?? partial ?? errors ?? null));
  }
  if (!part.type.startsWith('tool-') && part.type !== 'dynamic-tool') return null;
  const tool = element('div', { class: 'tool', 'data-tool-call-id': part.toolCallId, 'data-state': part.state });
  tool.append(element('span', { class: 'tool-name' }, part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length)));
  tool.append(element('code', { class: 'tool-input' }, JSON.stringify(part.input)));
  if (part.state === 'approval-requested') {
    const approve = element('button', { type: 'button', class: 'approve' }, 'Approve');
    approve.addEventListener('click', () => chat.addToolApprovalResponse({ id: part.approval.id, approved: true }));
    const deny = element('button', { type: 'button', class: 'deny' }, 'Deny');
    deny.addEventListener('click', () => chat.addToolApprovalResponse({ id: part.approval.id, approved: false, reason: 'Denied in the page' }));
    tool.append(approve, deny);
  }
  if (part.state === 'output-available') tool.append(element('code', { class: 'tool-output' }, JSON.stringify(part.output)));
  if (part.state === 'output-error') tool.append(element('code', { class: 'tool-error' }, part.errorText));
  return tool;
}

function render() {
  if (!chat) return;
  messagesList.replaceChildren(
    ...chat.messages.map((message) => {
      const item = element('li', { 'data-role': message.role, 'data-id': message.id });
      item.append(...message.parts.map(renderPart).filter((node) => node !== null));
      return item;
    }),
  );
  // Every text the page has shown for each text part, so a test can see the answer grow.
  for (const message of chat.messages) {
    message.parts.forEach((part, index) => {
      if (part.type !== 'text') return;
      const shown = (window.shownTexts[`${message.id}/${index}`] ??= []);
      if (shown.at(-1) !== part.text) shown.push(part.text);
    });
  }
  statusLine.textContent = chat.error ? `error: ${chat.error.message}` : chat.status;
  statusLine.dataset.status = chat.error ? 'error' : chat.status;
}

chat = new DomChat({
  id: params.get('chat'),
  // With ?token=, a bearer token; without, the sign-in session's cookie (sent by the browser) and its CSRF token.
  transport: new DefaultChatTransport({
    api: '/api/chat',
    headers: params.get('token')
      ? { authorization: `Bearer ${params.get('token')}` }
      : async () => ({ 'x-csrf-token': (await fetch('/api/me').then((response) => response.json())).csrfToken ?? '' }),
    ...(params.get('body') ? { body: JSON.parse(params.get('body')) } : {}),
  }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
render();

document.getElementById('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const prompt = document.getElementById('prompt');
  void chat.sendMessage({ text: prompt.value });
  prompt.value = '';
});
