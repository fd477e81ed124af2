/**
 * The worker's log lines, captured. A test file that imports this before the turnpike harness
 * (which otherwise installs the process's Runtime, logging errors only) gets every line at WARN
 * and above, the "Activity failed" lines of failed activities included; errors are still printed.
 */
import { inspect } from 'node:util';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';

const entries: LogEntry[] = [];

Runtime.install({
  logger: new DefaultLogger('WARN', (entry) => {
    entries.push(entry);
    if (entry.level === 'ERROR') console.error(entry.message, entry.meta ?? '');
  }),
});

/** Every captured line as the default logger prints it: the message and its metadata, errors and their causes in full. */
export function capturedLogText(): string {
  return entries.map((entry) => `[${entry.level}] ${entry.message} ${inspect(entry.meta, { depth: 10 })}`).join('\n');
}
