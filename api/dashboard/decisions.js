// The audit trail: the newest decisions, under the queue.
import { $ } from './page.js';
import { api } from './requests.js';

/** The audit trail's newest entries (GET /api/decisions), refreshed less often than the queue. */
export async function refreshDecisions() {
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
