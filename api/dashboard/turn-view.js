// One turn, shown by its id in the page URL (?turn=<id>).
import { $ } from './page.js';
import { api } from './requests.js';
import { renderJson } from './format.js';

/**
 * One turn, by its id in the page URL: what GET /api/turns/:id answers. A turn the caller may not
 * read is answered as one that does not exist (404), and the page says only that.
 */
export async function showTurn(turnId) {
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
