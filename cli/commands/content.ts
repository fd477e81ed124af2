/**
 * `content get` and `content sweep`: read one object of the content store, and delete what no
 * workflow needs any more. Both use the store TURNPIKE_CONTENT_STORE names.
 */
import { writeFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { ClaimCheckCodec } from '../../content/claim-check-codec.js';
import { keyOfRef, isContentKey, type ContentStore } from '../../content/content-store.js';
import { sweepContent, type SweepReport } from '../../content/content-sweep.js';
import { readStoredContent } from '../../content/read-content.js';
import { contentStoreFromEnvironment } from '../../content/store-from-environment.js';
import { parseDuration } from '../arguments.js';
import type { CliContext } from '../context.js';
import { formatDuration } from '../format.js';

const DEFAULT_RETENTION = '7d';

/** `sha256:<hex>`, or the 64 hex digits alone. */
function parseRef(value: string): string {
  const key = keyOfRef(value) ?? (isContentKey(value) ? value : undefined);
  if (!key) throw new InvalidArgumentError('expected a content reference, sha256: and 64 lowercase hex digits');
  return key;
}

async function withStore<T>(work: (store: ContentStore) => Promise<T>): Promise<T> {
  const store = contentStoreFromEnvironment();
  try {
    return await work(store);
  } finally {
    await store.close?.();
  }
}

export function registerContentCommands(program: Command, context: CliContext): void {
  const content = program
    .command('content')
    .description('the content store (TURNPIKE_CONTENT_STORE): read an object, sweep what no workflow needs');

  content
    .command('get')
    .description('write a stored object, checked against its hash; a claimed payload as the JSON it holds')
    .argument('<ref>', 'sha256:<hex>, as history and messages show it', parseRef)
    .option('--out <file>', 'write it to this file (default: stdout; with --json, as base64 in {ref, bytes, encoding?, base64})')
    .option('--raw', 'the stored bytes as they are, also of a claimed payload')
    .addHelpText('after', '\nExit code 4 when there is no such object, 1 when its bytes do not hash to its reference.')
    .action(async (key: string, options: { out?: string; raw?: boolean }) => {
      const found = await withStore((store) => readStoredContent(store, key, { raw: options.raw }));
      const about = { ref: `sha256:${key}`, bytes: found.bytes.length, ...(found.encoding ? { encoding: found.encoding } : {}) };
      if (!options.out) {
        // stdout holds JSON only with --json: the content goes in it as base64.
        if (context.json) context.print({ ...about, base64: Buffer.from(found.bytes).toString('base64') }, () => '');
        else context.bytes(found.bytes);
        return;
      }
      await writeFile(options.out, found.bytes);
      context.print({ ...about, out: options.out }, () => `wrote ${about.bytes} bytes${found.encoding ? ` (the ${found.encoding} data of a claimed payload)` : ''} to ${options.out}`);
    });

  content
    .command('sweep')
    .description('delete stored objects older than the retention that no running or recently closed workflow refers to')
    .option('--retention <duration>', `keep objects this long after they were stored and after the last workflow referring to them closed (default ${DEFAULT_RETENTION}), e.g. 7d, 12h, 30m`, parseDuration)
    .option('--dry-run', 'report what would be deleted, delete nothing')
    .option('--verbose', 'say on stderr what the sweep meets (payloads it could not decode or read)')
    .option('--skip-workflow <workflowId>', 'do not read this workflow\'s history (repeatable); content only it refers to is deleted like any other', (id: string, ids: string[] = []) => [...ids, id])
    .addHelpText(
      'after',
      `
Reads the history of every workflow in the namespace that is running or closed within the
retention, through turnpike's codecs. If a payload is in an encoding those do not read (a
codec of the application's, such as encryption), nothing is deleted: run the sweep from code
with sweepContent({ codecs }) instead. If Temporal does not give a workflow's history, the
sweep reads the others, deletes nothing, names that workflow and exits 1; --skip-workflow
leaves it unread.`,
    )
    .action(async (options: { retention?: number; dryRun?: boolean; verbose?: boolean; skipWorkflow?: string[] }) => {
      const { client } = await context.client();
      const retention = options.retention ?? parseDuration(DEFAULT_RETENTION);
      // The client's own codecs, when it has turnpike's: those of an application embedding the CLI with its client included.
      const own = client.options.loadedDataConverter.payloadCodecs;
      const codecs = own.some((codec) => codec instanceof ClaimCheckCodec) ? { codecs: own } : {};
      const report = await withStore((store) =>
        sweepContent({
          client,
          store,
          retention,
          ...codecs,
          dryRun: Boolean(options.dryRun),
          ...(options.skipWorkflow ? { skipWorkflows: options.skipWorkflow } : {}),
          ...(options.verbose ? { log: (line: string) => context.note(line) } : {}),
        }),
      );
      context.print(report, () => sweepText(report, retention, context));
      const unread = report.unreadableWorkflows;
      if (unread.length > 0) {
        const named = unread.map(({ workflowId, runId, error }) => `workflow ${workflowId} (run ${runId}): ${error}`).join('; ');
        const skips = [...new Set(unread.map(({ workflowId }) => `--skip-workflow ${workflowId}`))].join(' ');
        throw new Error(
          `${unread.length} ${unread.length === 1 ? 'history' : 'histories'} could not be read, so nothing was deleted: ${named}. ` +
            `If what they refer to need not be kept, sweep without reading them: turnpike content sweep ${skips}`,
        );
      }
    });
}

function sweepText(report: SweepReport, retention: number, context: CliContext): string {
  const { colors } = context;
  const { recent, referenced, unverified } = report.kept;
  const lines = [
    `${report.objects} objects; retention ${formatDuration(retention)} (stored before ${report.cutoff}); ${report.workflowsScanned} workflows and ${report.schedulesScanned} schedules read`,
    `  kept     ${recent} recent, ${referenced} referenced${unverified > 0 ? `, ${unverified} unverified` : ''}`,
    `  ${report.dryRun ? 'would delete' : 'deleted'}  ${report.deleted} (${report.bytesDeleted} bytes)`,
  ];
  if (report.partialsRemoved > 0) lines.push(`  removed  ${report.partialsRemoved} temporary files of interrupted writes`);
  if (report.undecodable > 0) lines.push(colors.dim(`  ${report.undecodable} payloads could not be decoded (broken content; they refer to nothing)`));
  if (report.unreadable > 0) lines.push(colors.yellow(`  ${report.unreadable} payloads could not be read to the end, so nothing was deleted (--verbose says where)`));
  if (report.workflowsSkipped > 0) lines.push(colors.dim(`  ${report.workflowsSkipped} workflow runs skipped (--skip-workflow)`));
  return lines.join('\n');
}
