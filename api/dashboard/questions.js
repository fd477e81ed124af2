// Questions from MCP servers (elicitation): a form from the requested schema, answered with one of
// MCP's three actions.
import { state, toast } from './page.js';
import { api } from './requests.js';
import { readFields } from './schema-form.js';
import { keyOf, removeCard } from './cards.js';

/** Shows what is wrong with the answer under the form (and says so to screen readers). */
export function showProblem(card, message) {
  const list = card.querySelector('.answer-problems');
  list.replaceChildren();
  if (!message) return;
  const item = document.createElement('li');
  item.className = 'invalid';
  item.textContent = message;
  list.append(item);
}

/** Answers a server's question: `accept` with the form's content, `decline` or `cancel` (MCP's three actions). */
export async function answerQuestion(card, call, action) {
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
