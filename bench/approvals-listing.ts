/**
 * `npm run bench:listing`: how long the approval dashboard's listing takes with many parked
 * calls across turns. Parks N turns (default 2,000; `--turns N`) on its own dev server with a real
 * turnpike worker, then times `GET /api/approvals` through the HTTP API (visibility pages that
 * carry each turn's parked calls in its memo) and `TurnpikeClient.listParkedCalls` directly,
 * several times each. Writes bench/results/approvals-listing.{json,md}. A benchmark, not a test: figures only.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../connection/temporal-connection.js';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { buildApi, parseTokenMap } from '../api/index.js';
import { TurnpikeClient, turnpikeDataConverter, type agentTurn } from '../client/index.js';
import { demoTools } from '../demo/tools.js';
import { startDevServer } from '../scripts/dev-server.js';
import { createWorker } from '../worker/index.js';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const turns = Number(process.argv[process.argv.indexOf('--turns') + 1] || 2_000) || 2_000;
const ROUNDS = 7;
/** Rounds of `listDecisions` (it queried every running turn before parked turns kept their decisions in the memo). */
const DECISION_ROUNDS = 3;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const log = (line: string) => console.log(`[listing] ${line}`);
  // The same dispatch limit as npm run bench (see bench/README.md).
  const server = await startDevServer({ headless: true, dynamicConfig: { 'history.transferProcessorMaxPollRPS': 1000 } });
  const connection = await connectTemporal({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace, dataConverter: turnpikeDataConverter });
  const taskQueue = 'listing-bench';
  const worker = await createWorker({ tools: demoTools, taskQueue, connection: nativeConnection, namespace: server.namespace });
  const running = worker.run();
  try {
    const parkStarted = performance.now();
    for (let start = 0; start < turns; start += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, turns - start) }, (_, index) =>
          client.workflow.start<typeof agentTurn>('agentTurn', {
            taskQueue,
            workflowId: `listing-${start + index}`,
            args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: `refund $${200 + ((start + index) % 300)} on order 1001` }] }],
          }),
        ),
      );
    }
    const countQuery = `WorkflowType="agentTurn" AND AgentTurnStatus="awaiting-input" AND TaskQueue="${taskQueue}"`;
    for (;;) {
      const { count } = await client.workflow.count(countQuery);
      if (count >= turns) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const parkSeconds = (performance.now() - parkStarted) / 1000;
    log(`${turns} turns parked in ${parkSeconds.toFixed(1)} s`);

    const turnpike = new TurnpikeClient({ client, taskQueue });
    const api = await buildApi({ client: turnpike, tokens: parseTokenMap('bench-token:bench') });
    const measure = async (what: string, run: () => Promise<number>, rounds = ROUNDS) => {
      const times: number[] = [];
      let listed = 0;
      for (let round = 0; round < rounds; round++) {
        // Past the API's 500 ms shared-listing window, so every round computes a listing.
        await new Promise((resolve) => setTimeout(resolve, 600));
        const started = performance.now();
        listed = await run();
        times.push(performance.now() - started);
      }
      const figures = { listed, medianMs: percentile(times, 50), p95Ms: percentile(times, 95), minMs: Math.min(...times) };
      log(`${what}: ${JSON.stringify(figures)}`);
      return figures;
    };
    const http = await measure('GET /api/approvals', async () => {
      const response = await api.inject({ url: '/api/approvals', headers: { authorization: 'Bearer bench-token' } });
      return (response.json() as { calls: unknown[] }).calls.length;
    });
    const direct = await measure('TurnpikeClient.listParkedCalls', async () => (await turnpike.listParkedCalls({ limit: turns })).length);
    // The audit trail over the same turns: parked turns carry their decisions in their memo.
    const decisions = await measure('TurnpikeClient.listDecisions', async () => (await turnpike.listDecisions({ limit: 1_000 })).length, DECISION_ROUNDS);
    await api.close();
    const results = { turns, parkSeconds, rounds: ROUNDS, decisionRounds: DECISION_ROUNDS, http, direct, decisions, machine: { cores: (await import('node:os')).cpus().length, node: process.version }, at: new Date().toISOString() };
    writeFileSync(`${RESULTS}approvals-listing.json`, `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(
      `${RESULTS}approvals-listing.md`,
      [
        `# Listing parked approvals (${turns} parked turns, one dev server, ${results.machine.cores} cores)`,
        '',
        '| what | listed | median | p95 | min |',
        '|---|---|---|---|---|',
        `| GET /api/approvals | ${http.listed} | ${http.medianMs.toFixed(0)} ms | ${http.p95Ms.toFixed(0)} ms | ${http.minMs.toFixed(0)} ms |`,
        `| TurnpikeClient.listParkedCalls | ${direct.listed} | ${direct.medianMs.toFixed(0)} ms | ${direct.p95Ms.toFixed(0)} ms | ${direct.minMs.toFixed(0)} ms |`,
        `| TurnpikeClient.listDecisions (${turns} running turns, none decided) | ${decisions.listed} | ${decisions.medianMs.toFixed(0)} ms | ${decisions.p95Ms.toFixed(0)} ms | ${decisions.minMs.toFixed(0)} ms |`,
        '',
        `${ROUNDS} rounds each (listDecisions ${DECISION_ROUNDS}); parking them took ${parkSeconds.toFixed(1)} s; load average at the end ${loadavg().map((load) => load.toFixed(1)).join(' / ')}.`,
        '',
      ].join('\n'),
    );
  } finally {
    worker.shutdown();
    await running;
    await nativeConnection.close();
    await connection.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
