// One turn, shown by its id in the page URL (?turn=<id>).
import { $ } from './page.js';
import { api } from './requests.js';
import { renderJson } from './format.js';

/**
 * One turn, by its id in the page URL: what GET /api/turns/:id answers, with its model step's wait
 * for model capacity when it has one. A turn the caller may not
 * read is answered as one that does not exist (404), and the page says only that.
 */
export async function showTurn(turnId) {
  $('#turn-view').hidden = false;
  $('#turn-id').textContent = turnId;
  try {
    const { state: turn, waitingForCapacity } = await api(`/api/turns/${encodeURIComponent(turnId)}`);
    $('#turn-status').textContent = turn.status;
    $('#turn-step').textContent = String(turn.step);
    $('#turn-facts').hidden = false;
    if (waitingForCapacity) {
      // Its model step is queued behind the model queue's rate (as of this read of the page).
      const { since, taskQueue, attempt } = waitingForCapacity;
      $('#turn-capacity').textContent = `Waiting for model capacity since ${new Date(since).toLocaleString()} on ${taskQueue}${attempt > 1 ? ` (attempt ${attempt})` : ''}.`;
      $('#turn-capacity').hidden = false;
    }
    if (turn.pending.length > 0) {
      renderJson($('#turn-pending'), turn.pending.map(({ toolName, input, kind }) => ({ toolName, kind, input })));
      $('#turn-pending').hidden = false;
    }
    offerFork(turnId, turn.step);
    await listForks(turnId);
  } catch (error) {
    $('#turn-missing').textContent = error.status === 404 ? 'No such turn was found.' : `The turn could not be read: ${error.message}`;
    $('#turn-missing').hidden = false;
  }
}

/**
 * "Fork from here": a new turn from this turn's transcript up to the end of the step chosen, on
 * another model if one is given (POST /api/turns/:id/fork); the page then links to the fork.
 */
function offerFork(turnId, step) {
  const form = $('#turn-fork');
  $('#fork-step').value = String(Math.max(1, step - 1));
  form.hidden = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const result = $('#fork-result');
    const [provider, ...model] = $('#fork-model').value.trim().split(':');
    const body = { atStep: Number($('#fork-step').value), ...(provider ? { model: { provider, model: model.join(':') || 'default' } } : {}) };
    try {
      const fork = await api(`/api/turns/${encodeURIComponent(turnId)}/fork`, { method: 'POST', body: JSON.stringify(body) });
      const link = document.createElement('a');
      link.href = `?turn=${encodeURIComponent(fork.turnId)}`;
      link.textContent = fork.turnId;
      result.replaceChildren('Forked at step ' + fork.forkOf.atStep + ': ', link);
    } catch (error) {
      result.textContent = `Not forked: ${error.message}`;
    }
  });
}

/** The forks started from this turn (GET /api/turns/:id/forks), each a link to its page. */
async function listForks(turnId) {
  const { forks } = await api(`/api/turns/${encodeURIComponent(turnId)}/forks`);
  if (forks.length === 0) return;
  $('#turn-fork-list').replaceChildren(...forks.map((fork) => {
    const item = document.createElement('li');
    const link = document.createElement('a');
    link.href = `?turn=${encodeURIComponent(fork.turnId)}`;
    link.textContent = fork.turnId;
    item.append(link, ` from step ${fork.atStep}, ${fork.status.toLowerCase()}${fork.startedBy ? `, by ${fork.startedBy}` : ''}`);
    return item;
  }));
  $('#turn-forks').hidden = false;
}
