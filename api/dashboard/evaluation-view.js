// One evaluation run's report, by its id in the page URL (?evaluation=<id>): docs/evaluations.md.
import { $, REFRESH_MS } from './page.js';
import { api } from './requests.js';

/** A cell of the report's table. */
function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

const calls = ({ same, differentInput, new: added, missing }) => `${same} same · ${differentInput} other input · ${added} new · ${missing} missing`;

/** A turn's grades: `name 0.75 pass · other error: …` (— without graders). */
const grades = (list) =>
  list && list.length > 0
    ? list.map((grade) => (grade.error !== undefined || grade.score === undefined ? `${grade.grader} error: ${grade.error ?? 'no score'}` : `${grade.grader} ${grade.score.toFixed(2)} ${grade.pass ? 'pass' : 'fail'}`)).join(' · ')
    : '—';

/** One evaluated turn beside its original: a row of the table. */
function row(evaluated) {
  const tr = document.createElement('tr');
  const turn = document.createElement('td');
  const link = document.createElement('a');
  link.href = `?turn=${encodeURIComponent(evaluated.turnId)}`;
  link.textContent = evaluated.turnId;
  turn.append(link);
  if (evaluated.error) {
    tr.append(turn, cell(`error: ${evaluated.error}`, 'outcome bad'));
    tr.lastChild.colSpan = 9;
    return tr;
  }
  const output = evaluated.output ? (evaluated.output.valid ? (evaluated.output.changedFields.length > 0 ? `~${evaluated.output.changedFields.join(', ')}` : 'same') : 'invalid') : '—';
  tr.append(
    turn,
    cell(`${evaluated.status.original} → ${evaluated.status.evaluated}`),
    cell(evaluated.textChanged ? 'changed' : 'same', evaluated.textChanged ? 'outcome bad' : 'outcome ok'),
    cell(output, evaluated.output && !evaluated.output.valid ? 'outcome bad' : undefined),
    cell(calls(evaluated.toolCalls)),
    cell(`${evaluated.replayed} replayed · ${evaluated.notRun} not run · ${evaluated.ranSafe} ran safe`),
    cell(String(evaluated.wouldAsk)),
    cell(String(evaluated.denials)),
    cell(`${evaluated.original.usage.tokens} → ${evaluated.evaluated.usage.tokens}`),
    cell(grades(evaluated.grades), evaluated.grades?.some((grade) => grade.error !== undefined || grade.pass === false) ? 'outcome bad' : undefined),
  );
  return tr;
}

/** Each grader's totals: `; graders: name mean 0.75 (2 passed, 1 failed, 0 errors)`. */
function graderTotals(graders) {
  const names = Object.keys(graders ?? {});
  if (names.length === 0) return '';
  const each = names.map((name) => {
    const g = graders[name];
    return `${name} ${g.meanScore !== undefined ? `mean ${g.meanScore.toFixed(2)}` : 'no score'} (${g.passes} passed, ${g.fails} failed, ${g.errors} errors)`;
  });
  return ` Graders: ${each.join('; ')}.`;
}

/** The totals, as the terminal's table ends them. */
function totals(report) {
  const t = report.totals;
  return `${report.status}: ${t.turns} of ${report.total} turns evaluated, ${t.errors} errors; final text changed in ${t.textChanged}, typed output invalid in ${t.outputInvalid}; tool calls ${calls(t.toolCalls)}; ${t.replayed} replayed, ${t.notRun} not run, ${t.ranSafe} ran safe; ${t.wouldAsk} would ask a person, ${t.denials} denied; tokens ${t.original.usage.tokens} → ${t.evaluated.usage.tokens}.${graderTotals(t.graders)}`;
}

/**
 * The report (GET /api/evaluations/:id), read again every 2 s while the run goes on. A run the
 * caller did not start (and is no admin) is answered as one that does not exist, and the page
 * says only that.
 */
export async function showEvaluation(evaluationId) {
  $('#evaluation-view').hidden = false;
  $('#evaluation-id').textContent = evaluationId;
  try {
    const report = await api(`/api/evaluations/${encodeURIComponent(evaluationId)}`);
    $('#evaluation-totals').textContent = totals(report);
    $('#evaluation-rows').replaceChildren(...report.rows.map(row));
    $('#evaluation-report').hidden = false;
    if (report.status === 'running' && REFRESH_MS > 0) setTimeout(() => showEvaluation(evaluationId), 2_000);
  } catch (error) {
    $('#evaluation-missing').textContent = error.status === 404 ? 'No such evaluation was found.' : `The evaluation could not be read: ${error.message}`;
    $('#evaluation-missing').hidden = false;
  }
}
