/**
 * `npm run bench`: turnpike against a floor of hand-written Temporal, in one run, on this machine.
 *
 * Starts its own headless, in-memory Temporal dev server, bundles both workflow sets once,
 * and for each scenario starts a fresh turnpike worker and a fresh floor worker, each in a
 * child process of its own (so their memory and CPU are measurable), on their own task
 * queues. Writes bench/results/<name>.json and .md and prints the table.
 * Flags: see options.ts (`--quick` for a 1–2 minute smoke run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../connection/temporal-connection.js';
import { turnpikeDataConverter } from '../content/data-converter.js';
import { startDevServer } from '../scripts/dev-server.js';
import { writeBundles } from './bundles.js';
import { startFakeOpenAI } from './fake-openai.js';
import { startSystems, type BenchContext, type Systems } from './context.js';
import { machineInfo } from './machine-info.js';
import { parseBenchOptions, type ScenarioName } from './options.js';
import { renderMarkdown, writeResults } from './report.js';
import type { BenchResults, Figures } from './results.js';
import { measureAiSdkModel } from './scenarios/ai-sdk-model.js';
import { measureHistory } from './scenarios/history.js';
import { measureParkedCapacity } from './scenarios/parked-capacity.js';
import { measureResumeLatency } from './scenarios/resume-latency.js';
import { measureResumePayload } from './scenarios/resume-payload.js';
import { measureScale } from './scenarios/scale.js';
import { measureLargeImage } from './scenarios/large-image.js';
import { measureLongStream } from './scenarios/long-stream.js';
import { measureReaders } from './scenarios/readers.js';
import { measureStreaming } from './scenarios/streaming.js';
import { measureThroughput } from './scenarios/throughput.js';
import { measureTurnLatency } from './scenarios/turn-latency.js';
import { measureClosedTurn } from './scenarios/closed-turn.js';
import { measureFleet } from './scenarios/fleet.js';
import { measureCluster } from './scenarios/cluster.js';
import { measureEvaluation } from './scenarios/evaluation.js';
import { reportRows } from './targets.js';

const RESULTS_DIRECTORY = fileURLToPath(new URL('./results/', import.meta.url));

type Scenario = (context: BenchContext, systems: Systems) => Promise<Figures[keyof Figures]>;

/** Scenarios that start every process they measure (no turnpike and floor workers on the run's dev server). */
const OWN_TOPOLOGY: Partial<Record<ScenarioName, (context: BenchContext) => Promise<Figures[keyof Figures]>>> = { cluster: measureCluster, eval: measureEvaluation };

const SCENARIO_RUNNERS: Record<Exclude<ScenarioName, 'cluster' | 'eval'>, Scenario> = {
  latency: measureTurnLatency,
  resume: measureResumeLatency,
  throughput: measureThroughput,
  capacity: measureParkedCapacity,
  history: measureHistory,
  payload: measureResumePayload,
  scale: measureScale,
  streaming: measureStreaming,
  readers: measureReaders,
  'long-stream': measureLongStream,
  'large-image': measureLargeImage,
  'ai-sdk-model': measureAiSdkModel,
  'closed-turn': measureClosedTurn,
  fleet: measureFleet,
};

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2));
  const started = performance.now();
  const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-'));
  log(`turnpike bench${options.quick ? ' --quick' : ''}: ${options.scenarios.join(', ')}`);

  const [server, bundles, fakeOpenAI] = await Promise.all([
    startDevServer({ headless: true, dynamicConfig: options.serverDynamicConfig, log }),
    writeBundles(scratch),
    startFakeOpenAI(),
  ]);
  const kib = (bytes: number | undefined) => (bytes === undefined ? 'not built' : `${(bytes / 1024).toFixed(0)} KiB`);
  log(`dev server on ${server.address}; fake OpenAI on ${fakeOpenAI.baseURL}; bundles: turnpike ${kib(bundles.bytes.turnpike)}, floor ${kib(bundles.bytes.floor)}, ai-sdk ${kib(bundles.bytes.aiSdk)}`);
  const connection = await connectTemporal({ address: server.address });
  // turnpike's workers compress large payloads; its clients must use the same converter.
  const client = new Client({ connection, namespace: server.namespace, dataConverter: turnpikeDataConverter });
  const plainClient = new Client({ connection, namespace: server.namespace });
  // Said in the report instead of leaving the comparison out silently.
  const aiSdkNotMeasured: Record<string, string> = bundles.aiSdkError ? { run: bundles.aiSdkError } : {};
  if (aiSdkNotMeasured.run) log(`ai-sdk not measured: ${aiSdkNotMeasured.run}`);
  const context: BenchContext = {
    client,
    plainClient,
    address: server.address,
    namespace: server.namespace,
    ...(server.pid !== undefined ? { serverPid: server.pid } : {}),
    options,
    bundlePaths: bundles,
    openaiBaseURL: fakeOpenAI.baseURL,
    fakeOpenAI,
    aiSdkNotMeasured,
    log,
  };
  const machine = machineInfo(server.cli);
  const figures: Figures = {};
  const errors: Record<string, string> = {};
  let workerSettings: BenchResults['workerSettings'];

  try {
    for (const scenario of options.scenarios) {
      log(`${scenario}: starting workers`);
      let systems: Systems | undefined;
      try {
        const own = OWN_TOPOLOGY[scenario];
        const scenarioStarted = performance.now();
        if (own) {
          (figures as Record<string, unknown>)[scenario] = await own(context);
        } else {
          systems = await startSystems(context, scenario);
          workerSettings ??= { turnpike: systems.turnpike.worker.settings, floor: systems.floor.worker.settings };
          (figures as Record<string, unknown>)[scenario] = await SCENARIO_RUNNERS[scenario as Exclude<ScenarioName, 'cluster' | 'eval'>](context, systems);
        }
        const rejected = fakeOpenAI.takeRejected();
        if (rejected.length > 0) throw new Error(`the fake OpenAI server rejected ${rejected.length} requests, e.g. ${rejected[0]}`);
        log(`${scenario}: done in ${((performance.now() - scenarioStarted) / 1000).toFixed(1)} s`);
      } catch (error) {
        // Keep going: one broken scenario should not cost the figures of the others.
        errors[scenario] = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`${scenario}: FAILED: ${errors[scenario]}`);
      } finally {
        await systems?.stop();
      }
    }
  } finally {
    await connection.close();
    await Promise.all([server.stop(), fakeOpenAI.close()]);
    rmSync(scratch, { recursive: true, force: true });
  }

  machine.loadAverage.end = os.loadavg()[0];
  const results: BenchResults = {
    machine,
    options,
    ...(workerSettings ? { workerSettings } : {}),
    figures,
    aiSdkNotMeasured,
    rows: reportRows(figures),
    errors,
    durationSeconds: (performance.now() - started) / 1000,
  };
  const written = writeResults(RESULTS_DIRECTORY, results);
  console.log(`\n${renderMarkdown(results)}`);
  log(`wrote ${path.relative(process.cwd(), written.json)} and ${path.relative(process.cwd(), written.markdown)}`);
  if (Object.keys(errors).length > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
