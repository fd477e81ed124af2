/**
 * Re-renders a results file's rows from its measured figures with the current targets
 * (`targets.ts`), without measuring again: `npm run bench:rejudge -- [name]` (default "latest").
 * Only the rows' targets and verdicts can change; the figures are the run's own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeResults } from './report.js';
import type { BenchResults } from './results.js';
import { reportRows } from './targets.js';

const directory = fileURLToPath(new URL('./results/', import.meta.url));
const name = process.argv[2] ?? 'latest';
const results = JSON.parse(readFileSync(path.join(directory, `${name}.json`), 'utf8')) as BenchResults;
// Written back under the name it was read from (a run's own `options.name` may differ once it was moved).
const written = writeResults(directory, { ...results, options: { ...results.options, name }, rows: reportRows(results.figures) });
console.log(`re-judged ${path.relative(process.cwd(), written.markdown)}`);
