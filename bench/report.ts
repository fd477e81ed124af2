/** Writes a run's results: `bench/results/<name>.json` (everything) and `<name>.md` (the summary table). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BenchResults } from './results.js';
import type { WorkerSettings } from './worker-protocol.js';

const cell = (text: string) => text.replace(/\|/g, '\\|');

function serverConfig(config: Record<string, number>): string {
  const entries = Object.entries(config);
  return entries.length === 0 ? 'stock settings' : `${entries.map(([key, value]) => `${key}=${value}`).join(', ')} (see options.ts)`;
}

export function renderMarkdown(results: BenchResults): string {
  const { machine, options, workerSettings, figures, rows, errors } = results;
  const lines: string[] = [];
  lines.push(`# turnpike benchmark${options.quick ? ' (quick)' : ''}`, '');
  lines.push(
    `${machine.date} · ${machine.cpus} × ${machine.cpuModel}, ${machine.totalMemoryMB} MB · Node ${machine.node} · ` +
      `Temporal CLI ${machine.temporalCli.pinned} (${machine.temporalCli.reported}) · SDK ${machine.temporalSdk} · ` +
      `commit ${machine.git.commit}${machine.git.uncommittedRuntimeFiles.length > 0 ? ` + ${machine.git.uncommittedRuntimeFiles.length} uncommitted runtime files` : ''} · ` +
      `load ${machine.loadAverage.start.toFixed(2)} → ${machine.loadAverage.end?.toFixed(2) ?? '?'} · ${results.durationSeconds.toFixed(0)} s`,
    '',
  );
  if (workerSettings) {
    const describe = ({ maxCachedWorkflows, maxConcurrentWorkflowTaskExecutions, reuseV8Context }: WorkerSettings) =>
      `maxCachedWorkflows ${maxCachedWorkflows}, maxConcurrentWorkflowTaskExecutions ${maxConcurrentWorkflowTaskExecutions}, reuseV8Context ${reuseV8Context}`;
    const turnpike = describe(workerSettings.turnpike);
    const floor = describe(workerSettings.floor);
    lines.push(
      `${turnpike === floor ? `Both workers: ${turnpike}` : `turnpike worker: ${turnpike}; floor worker: ${floor}`} ` +
        `(V8 heap limit ${workerSettings.turnpike.heapSizeLimitMiB} MiB). Dev server in memory, ${serverConfig(options.serverDynamicConfig)}; scripted model; zero think time. ` +
        'The floor is a hand-written workflow with the same activities and update round trip.',
      '',
    );
  }
  const notMeasured = Object.entries(results.aiSdkNotMeasured ?? {});
  const packages = machine.aiSdkPackages ? Object.entries(machine.aiSdkPackages).map(([name, version]) => `${name} ${version}`).join(', ') : 'versions not recorded';
  if (notMeasured.length > 0) {
    for (const [scope, reason] of notMeasured) lines.push(`**ai-sdk: not measured${scope === 'run' ? '' : ` in ${scope}`} — ${reason}**`, '');
  }
  if (notMeasured.every(([scope]) => scope !== 'run')) {
    lines.push(
      `The ai-sdk columns compare \`@temporalio/ai-sdk\` (${packages}; AI SDK \`generateText\` in the workflow, \`AiSdkPlugin\`'s \`invokeModel\` activity, ` +
        '`@ai-sdk/openai` Chat Completions, the two tools as `tool()`s whose `execute` runs an activity, `stopWhen: stepCountIs(10)`) with turnpike running the same turns ' +
        'through its `openai` provider: both call the same fake OpenAI server over HTTP, which answers the same prompts with the same tool calls as the scripted model, so ' +
        '"turnpike (OpenAI fake)" differs from "turnpike" by that HTTP round trip. turnpike gzips payloads of 4 KiB or more (its data converter); the floor and ai-sdk run ' +
        "with Temporal's default converter, as their users would by default. ai-sdk has no parked turns here, so resume, capacity and payload are turnpike and floor only.",
      '',
    );
  }
  lines.push(
    '| figure | turnpike | floor | turnpike ÷ floor | turnpike (OpenAI fake) | ai-sdk | turnpike ÷ ai-sdk | target | met? |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const row of rows) {
    const met = row.met === null ? (row.target === '—' ? '' : `n/a${row.note ? ` (${row.note})` : ''}`) : row.met ? '**met**' : '**not met**';
    const aiSdk = row.aiSdk ? [row.aiSdk.turnpike, row.aiSdk.aiSdk, row.aiSdk.ratio] : ['—', '—', '—'];
    lines.push(`| ${[row.figure, row.turnpike, row.floor, row.ratio, ...aiSdk, row.target].map(cell).join(' | ')} | ${met} |`);
  }
  if (figures.payload) {
    lines.push('', 'What a client sends to continue a parked turn, by conversation length:', '');
    lines.push('| messages | stateless library re-sends (gzip) | turnpike resume payload | turnpike update request (wire) | turnpike turn start request (once per turn) | stateless ÷ turnpike | history of that 2-step turn |');
    lines.push('|---|---|---|---|---|---|---|');
    for (const row of figures.payload.turnpike) {
      lines.push(
        `| ${row.messages} | ${row.statelessResendBytes} B (${row.statelessResendGzipBytes} B) | ${row.resumePayloadBytes} B | ${row.updateRequestBytes} B | ${row.startRequestBytes} B | ${row.statelessToTurnpike.toFixed(0)}× | ${row.turnHistoryProtoBytes} B |`,
      );
    }
  }
  const failed = Object.entries(errors);
  if (failed.length > 0) {
    lines.push('', 'Scenarios that failed:', '');
    for (const [scenario, message] of failed) lines.push(`- ${scenario}: ${message.split('\n')[0]}`);
  }
  lines.push('', `Full figures: \`${options.name}.json\`. Re-run: \`npm run bench${options.quick ? ' -- --quick' : ''}\`.`, '');
  return lines.join('\n');
}

export function writeResults(directory: string, results: BenchResults): { json: string; markdown: string } {
  mkdirSync(directory, { recursive: true });
  const json = path.join(directory, `${results.options.name}.json`);
  const markdown = path.join(directory, `${results.options.name}.md`);
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(markdown, renderMarkdown(results));
  return { json, markdown };
}
