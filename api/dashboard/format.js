// How the dashboard shows values: durations, JSON, a turn's id as a link to Temporal's UI.
import { state } from './page.js';

export function duration(ms) {
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
export function renderJson(pre, value) {
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

export function workflowLink(turnId) {
  if (!state.config.temporalUiUrl) return null;
  const link = document.createElement('a');
  link.href = `${state.config.temporalUiUrl}/namespaces/${encodeURIComponent(state.config.namespace)}/workflows/${encodeURIComponent(turnId)}`;
  link.target = '_blank';
  link.rel = 'noopener';
  link.textContent = turnId;
  return link;
}
