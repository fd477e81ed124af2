/** Writes a run's results: `bench/results/<name>.json` (everything) and `<name>.md` (the summary table). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SCENARIOS, defaultResultsName } from './options.js';
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
  const image = figures['large-image'];
  if (image) {
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    const x = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : '—');
    const mb = (value: number) => `${(value / 1e6).toFixed(1)} MB`;
    lines.push(
      '',
      `The same ${image.steps}-step turn through the \`openai\` provider and the fake OpenAI server, without and with a ${mb(image.imageBytes)} PNG in its user message ` +
        `(stored by \`TurnpikeClient.startTurn\`, read back and sent as ${mb(image.imageBase64Bytes)} of base64 by every model step); medians of ${image.turns} turns each, alternated:`,
      '',
    );
    lines.push('| figure | without the image | with the image | with ÷ without |', '|---|---|---|---|');
    const { without, with: withImage } = image;
    const timed = (what: string, pick: (side: typeof withImage) => { median: number; n: number }, ratio: number) =>
      lines.push(`| ${what} (p50, n=${pick(withImage).n}) | ${ms(pick(without).median)} | ${ms(pick(withImage).median)} | ${x(ratio)} |`);
    timed('`startTurn` (with the image: storing it)', (side) => side.start, image.ratio.start);
    timed('turn, start → result', (side) => side.turn, image.ratio.turn);
    timed('model step (`callModel` scheduled → completed)', (side) => side.modelStep, image.ratio.modelStep);
    timed('tool step (`executeTool` scheduled → completed)', (side) => side.toolStep, image.ratio.toolStep);
    lines.push(`| history events | ${image.without.history.events} | ${image.with.history.events} | ${x(image.with.history.events / image.without.history.events)} |`);
    lines.push(`| history, protobuf bytes | ${image.without.history.protoBytes} B | ${image.with.history.protoBytes} B | ${x(image.ratio.historyProtoBytes)} |`);
    lines.push(
      '',
      `Of a model step with the image, reading it back from the store (read, hash check, base64; \`readStoredContent\` alone, in the bench process) took ${ms(image.readBack.median)} (p50, n=${image.readBack.n}). ` +
        `The content store held ${image.store.objects} objects, ${mb(image.store.bytes)}, at the end (every turn's image is new, and one more for the read-back).`,
    );
  }
  const failed = Object.entries(errors);
  if (failed.length > 0) {
    lines.push('', 'Scenarios that failed:', '');
    for (const [scenario, message] of failed) lines.push(`- ${scenario}: ${message.split('\n')[0]}`);
  }
  const flags = [
    ...(options.quick ? ['--quick'] : []),
    ...(options.scenarios.length < SCENARIOS.length ? [`--only ${options.scenarios.join(',')}`] : []),
    ...(options.name !== defaultResultsName(options.quick, options.scenarios.length < SCENARIOS.length ? options.scenarios : undefined) ? [`--name ${options.name}`] : []),
  ];
  lines.push('', `Full figures: \`${options.name}.json\`. Re-run: \`npm run bench${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}\`.`, '');
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
