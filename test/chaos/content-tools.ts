/**
 * A server tool for the content chaos test: `export_report` returns about 5 MB of JSON, the
 * same bytes on every run and in every process (so the test knows them without asking the
 * worker), and appends a line to `export-report.log` in CHAOS_RECORDS_DIR each time it runs.
 */
import { appendFileSync } from 'node:fs';
import { createCipheriv } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';

export const REPORT_LOG = 'export-report.log';

/** About 5 MB of incompressible base64, derived from a fixed key: identical in every process. */
export function reportOutput(): { rows: string } {
  const cipher = createCipheriv('aes-256-ctr', Buffer.alloc(32, 7), Buffer.alloc(16, 3));
  return { rows: cipher.update(Buffer.alloc((5 * 1024 * 1024 * 3) / 4)).toString('base64') };
}

export const exportReport = defineTool({
  name: 'export_report',
  description: 'Exports the quarterly report rows.',
  inputSchema: z.object({ quarter: z.string() }),
  activityOptions: { startToCloseTimeout: '60s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
  async execute({ quarter }, { idempotencyKey }) {
    const directory = process.env.CHAOS_RECORDS_DIR;
    if (!directory) throw new Error('CHAOS_RECORDS_DIR is not set');
    appendFileSync(path.join(directory, REPORT_LOG), `${JSON.stringify({ key: idempotencyKey, quarter, pid: process.pid })}\n`);
    return reportOutput();
  },
});
