/**
 * The production topology, for real: Debian's PostgreSQL, the Temporal server v1.29.1 on it
 * with SQL advanced visibility, the Web UI and three turnpike worker processes — started by the
 * same code and files as `npm run cluster` (scripts/temporal-cluster.ts, deploy/).
 *
 * 1. The README's operator commands (Temporal CLI) and the Web UI's workflow filter work on SQL
 *    visibility, not only on the dev server's.
 * 2. The chaos (chaos-plan.ts; TURNPIKE_CLUSTER_CHAOS=long for the long form): concurrent turns
 *    park twice each on an approval-gated charge; an approver finds them only through visibility
 *    listings by search attribute, as an operator or dashboard would. Meanwhile workers are
 *    SIGKILLed while they run charges (and replaced), the Temporal server process is SIGKILLed
 *    and started again, and PostgreSQL is restarted under everything. Every turn completes, no
 *    approved charge is lost or takes effect twice, no denied charge runs, no workflow task fails.
 * The workers and the test's client keep large content in a table of the same PostgreSQL
 * (TURNPIKE_CONTENT_STORE=postgresql://…): every turn of 2. carries a 300 KB document by
 * reference, which each of its model steps reads back from there.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTurnpikeDataConverter, PostgresContentStore, readVerified } from '../../client/index.js';
import { bundleWorkflows } from '../../worker/index.js';
import { DYNAMIC_CONFIG_FILE, ROOT, randomClusterPorts, startCluster, type Cluster } from '../../scripts/temporal-cluster.js';
import { readHistories } from './chaos-histories.js';
import { describeEvent } from './chaos-events.js';
import { approvedCharges, chaosForm, chaosPlan } from './chaos-plan.js';
import { CHAOS_TURN_PREFIX, PARKED_QUERY, runChaos } from './chaos-run.js';
import { eventually, everyCallAnsweredOnce, pendingOf, startTurn, TASK_QUEUE } from './cluster-support.js';

const PLAN = chaosPlan(chaosForm());

const run = promisify(execFile);

let directory: string;
let records: string;
let cluster: Cluster | undefined;
let client: Client;
let contentStore: PostgresContentStore;
/** Tests that ran to their end; when one did not, the cluster's logs are kept. */
let finished = 0;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'turnpike-cluster-'));
  // PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
  chmodSync(directory, 0o755);
  records = path.join(directory, 'records');
  mkdirSync(path.join(records, 'effects'), { recursive: true });
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  writeFileSync(bundlePath, (await bundleWorkflows()).code);
  const ports = await randomClusterPorts();
  // The cluster's own PostgreSQL (scripts/postgres.ts's bootstrap user), a table of its own.
  const contentUrl = `postgresql://temporal:temporal@127.0.0.1:${ports.postgres}/postgres?table=turnpike_content`;
  contentStore = new PostgresContentStore({ connectionString: contentUrl.replace('?table=turnpike_content', ''), table: 'turnpike_content' });
  cluster = await startCluster({
    directory,
    ports,
    workers: PLAN.workers,
    worker: {
      entry: path.join(ROOT, 'test', 'cluster', 'worker-process.ts'),
      env: { TURNPIKE_TASK_QUEUE: TASK_QUEUE, CHAOS_RECORDS_DIR: records, WORKFLOW_BUNDLE: bundlePath, TURNPIKE_CONTENT_STORE: contentUrl },
      readyPattern: /^ready$/,
    },
    ui: true,
    log: (line) => console.log(line),
  });
  client = new Client({ connection: await Connection.connect({ address: cluster.address }), namespace: cluster.namespace, dataConverter: createTurnpikeDataConverter({ contentStore }) });
});

afterAll(async () => {
  await client?.connection.close();
  await contentStore?.close();
  await cluster?.stop();
  if (finished === 3) rmSync(directory, { recursive: true, force: true });
  else console.log(`cluster test failed: its logs are kept in ${path.join(directory, 'logs')}`);
});

describe('turnpike on a PostgreSQL-backed Temporal cluster', () => {
  it('runs with a dynamic config whose every key and value type the server knows', async () => {
    // The server only warns about unknown keys and wrong types, and then ignores them: a typo
    // there would silently leave a default in place.
    const { stdout, stderr } = await run(cluster!.binaries.server, ['validate-dynamic-config', DYNAMIC_CONFIG_FILE], { timeout: 30_000 });
    expect(`${stdout}${stderr}`).not.toMatch(/warning|error/i);
    expect(stdout).toContain('turnpike.yaml');
    finished++;
  });

  it('answers the README operator commands (Temporal CLI) and the Web UI filter from SQL visibility', async () => {
    const temporal = async (...args: string[]) => (await run(cluster!.cli, [...args, '--address', cluster!.address], { timeout: 30_000 })).stdout;
    const listByCli = async (query: string) => {
      const output = await temporal('workflow', 'list', '--query', `${query} AND TaskQueue="${TASK_QUEUE}"`, '-o', 'json');
      return output.trim() ? (JSON.parse(output) as Array<{ execution: { workflowId: string } }>).map((row) => row.execution.workflowId).sort() : [];
    };
    const conversationId = `support-${Date.now()}`;
    const alpha = await startTurn(client, 'cli-alpha', 'use charge_card with {"amount": 5}', { conversationId });
    const bravo = await startTurn(client, 'cli-bravo', 'use charge_card with {"amount": 6}');
    const asking = await startTurn(client, 'cli-client-tool', 'ask me "first?" and ask me "second?"');
    const doomed = await startTurn(client, 'cli-cancel', 'use charge_card with {"amount": 7}');
    const [pendingAlpha] = await pendingOf(alpha);
    const [pendingBravo] = await pendingOf(bravo);
    const [first, second] = await pendingOf(asking, 2);
    await pendingOf(doomed);

    // temporal workflow list --query 'AgentTurnStatus="awaiting-input"'   (and the other two recipes)
    const parked = ['cli-alpha', 'cli-bravo', 'cli-cancel', 'cli-client-tool'];
    expect(await eventually('the parked turns listed', () => listByCli('AgentTurnStatus="awaiting-input"'), (ids) => JSON.stringify(ids) === JSON.stringify(parked))).toEqual(parked);
    expect(await listByCli('AgentPendingTools="charge_card"')).toEqual(['cli-alpha', 'cli-bravo', 'cli-cancel']);
    expect(await listByCli('AgentPendingTools="ask_user"')).toEqual(['cli-client-tool']);
    expect(await listByCli(`AgentConversationId="${conversationId}"`)).toEqual(['cli-alpha']);

    // The Web UI's workflow filter sends the same query through ui-server to SQL visibility.
    const uiQuery = encodeURIComponent(`AgentTurnStatus="awaiting-input" AND TaskQueue="${TASK_QUEUE}"`);
    const uiListing = (await (await fetch(`${cluster!.ui!.url}/api/v1/namespaces/${cluster!.namespace}/workflows?query=${uiQuery}`)).json()) as { executions: Array<{ execution: { workflowId: string } }> };
    expect(uiListing.executions.map((row) => row.execution.workflowId).sort()).toEqual(parked);

    // temporal workflow query --workflow-id <turn> --name turnState
    const state = JSON.parse(await temporal('workflow', 'query', '--workflow-id', 'cli-alpha', '--name', 'turnState', '-o', 'json'));
    expect(state.queryResult[0].pending[0].approvalId).toBe(pendingAlpha.approvalId);

    // update execute (approve), signal (deny), a rejected update, client results by update and signal, cancel
    expect(
      await temporal('workflow', 'update', 'execute', '--workflow-id', 'cli-alpha', '--name', 'approveToolCall',
        '--input', JSON.stringify({ approvalId: pendingAlpha.approvalId, approved: true, approver: 'ops' })),
    ).toContain(pendingAlpha.toolCallId);
    await temporal('workflow', 'signal', '--workflow-id', 'cli-bravo', '--name', 'approveToolCall',
      '--input', JSON.stringify({ approvalId: pendingBravo.approvalId, approved: false, approver: 'ops', reason: 'not now' }));
    const rejected = await temporal('workflow', 'update', 'execute', '--workflow-id', 'cli-cancel', '--name', 'approveToolCall',
      '--input', JSON.stringify({ approvalId: 'apr_unknown', approved: true })).then(() => '', (error: { stderr: string }) => error.stderr);
    expect(rejected).toMatch(/Unknown approvalId \(11 characters\): this turn has no approval with this id/);
    expect(
      await temporal('workflow', 'update', 'execute', '--workflow-id', 'cli-client-tool', '--name', 'submitToolResult',
        '--input', JSON.stringify({ toolCallId: first.toolCallId, output: { answer: 'yes' } })),
    ).toContain(first.toolCallId);
    await temporal('workflow', 'signal', '--workflow-id', 'cli-client-tool', '--name', 'submitToolResult',
      '--input', JSON.stringify({ toolCallId: second.toolCallId, output: { answer: 'no' } }));
    await temporal('workflow', 'cancel', '--workflow-id', 'cli-cancel');

    expect((await alpha.result()).toolCalls[0].outcome).toBe('approved');
    expect((await bravo.result()).toolCalls[0]).toMatchObject({ outcome: 'denied', approval: { reason: 'not now' } });
    expect((await asking.result()).toolCalls.map((call) => [call.outcome, call.output])).toEqual([['client', { answer: 'yes' }], ['client', { answer: 'no' }]]);
    expect((await doomed.result()).status).toBe('cancelled');
    expect(await eventually('no parked turn listed', () => listByCli('AgentTurnStatus="awaiting-input"'), (ids) => ids.length === 0)).toEqual([]);
    expect(await listByCli('AgentTurnStatus="cancelled"')).toEqual(['cli-cancel']);
    finished++;
  });

  it(
    `completes ${PLAN.turns} parked turns (${PLAN.form} form) through SIGKILLed workers, a restarted server and a restarted PostgreSQL, each approved charge taking effect once`,
    async () => {
      const chaos = await runChaos({ plan: PLAN, cluster: cluster!, client, contentStore, records });
      const { ids, results } = chaos;

      // Every event of the plan happened.
      expect(chaos.events.map((event) => event.kind)).toEqual(PLAN.events.map((event) => event.kind));

      // Every turn completed with a valid history and the expected outcomes.
      expect(results.map((result) => result.status)).toEqual(Array(PLAN.turns).fill('completed'));
      expect(results.every((result) => everyCallAnsweredOnce(result.messages))).toBe(true);
      // Every model step read the document back from PostgreSQL (a step that cannot fails with
      // ContentMissing, and its turn would not have completed), and it is there unchanged.
      expect(Buffer.from(await readVerified(contentStore, chaos.document.key)).equals(chaos.document.bytes)).toBe(true);
      const expectedOutcomes = ids.map((_, index) => (index % PLAN.denyEvery === PLAN.denyEvery - 1 ? 'approved,denied' : 'approved,approved'));
      expect(results.map((result) => result.toolCalls.map((call) => call.outcome).join())).toEqual(expectedOutcomes);

      // Every decision in the results is one the approver sent after finding the turn by visibility.
      const recorded = results.flatMap((result) => result.toolCalls.map((call) => call.approval));
      expect(recorded.every((approval) => approval?.approver === 'cluster-test' && approval.automatic === false)).toBe(true);
      expect(recorded).toHaveLength(PLAN.turns * 2);

      // Effects: exactly one per approved charge, none for a denied one.
      const keysOf = (outcome: string) =>
        results.flatMap((result, index) => result.toolCalls.filter((call) => call.outcome === outcome).map((call) => `${ids[index]}/${call.toolCallId}`)).sort();
      const approvedKeys = keysOf('approved');
      const deniedKeys = new Set(keysOf('denied'));
      expect(approvedKeys).toHaveLength(approvedCharges(PLAN.turns, PLAN.denyEvery));
      const effects = new Set(chaos.effects);
      const approvedSet = new Set(approvedKeys);
      const lost = approvedKeys.filter((key) => !effects.has(key));
      const unexpected = chaos.effects.filter((key) => !approvedSet.has(key));
      expect(lost).toEqual([]);
      expect(unexpected).toEqual([]);
      expect(chaos.attempts.filter((attempt) => deniedKeys.has(attempt.key))).toEqual([]);
      // Every charge result the turns saw came from that key's one effect.
      const chargeOutputs = results.flatMap((result) => result.toolCalls.filter((call) => call.outcome === 'approved').map((call) => call.output as { charged: number }));
      expect(chargeOutputs.every((output) => typeof output.charged === 'number')).toBe(true);

      // No workflow task failed: a restart may time one out (its reply lost), never fail it.
      const histories = await readHistories(client, ids);
      expect(histories.workflowTasksFailed).toEqual([]);

      // Visibility caught up after the restarts: nothing parked, every turn completed.
      await eventually(
        'visibility to show every turn completed',
        () => client.workflow.count(`AgentTurnStatus="completed" AND TaskQueue="${TASK_QUEUE}" AND WorkflowId STARTS_WITH "${CHAOS_TURN_PREFIX}"`),
        ({ count }) => count === PLAN.turns,
      );
      expect((await client.workflow.count(PARKED_QUERY)).count).toBe(0);

      const attemptsByKey = new Map<string, number>();
      for (const attempt of chaos.attempts) attemptsByKey.set(attempt.key, (attemptsByKey.get(attempt.key) ?? 0) + 1);
      const killed = new Set(chaos.events.flatMap((event) => (event.pid ? [event.pid] : [])));
      // Charges begun on a worker that was then killed and run again on another (the kill's victims).
      const pidsOf = new Map<string, Set<number>>();
      for (const attempt of chaos.attempts) pidsOf.set(attempt.key, (pidsOf.get(attempt.key) ?? new Set()).add(attempt.pid));
      const cutOff = [...pidsOf.values()].filter((pids) => pids.size > 1 && [...pids].some((pid) => killed.has(pid)));
      console.log(
        [
          `cluster chaos (${PLAN.form}): ${PLAN.turns} turns, ${PLAN.workers} workers, ${chaos.seconds.toFixed(0)}s from the first start to the last result`,
          `events: ${chaos.events.map(describeEvent).join('\n  ')}`,
          `${recorded.length} decisions (${approvedKeys.length} approved, ${deniedKeys.size} denied; ${recorded.length - chaos.decisionsConfirmed} update replies lost, ${chaos.updateRetries} update calls failed and retried) from ${chaos.listings} visibility listings (${chaos.failedListings} failed)`,
          `${chaos.attempts.length} charge attempts over ${attemptsByKey.size} keys; ${[...attemptsByKey.values()].filter((count) => count > 1).length} charges retried (${cutOff.length} begun on a worker then SIGKILLed and run again on another); ${chaos.effects.length} effects (lost ${lost.length}, duplicated ${unexpected.length}); denied charges run: 0`,
          `histories: ${histories.events} events, ${histories.workflowTasksFailed.length} workflow tasks failed, ${histories.workflowTasksTimedOut} timed out; retried activities ${JSON.stringify(histories.retriedActivities)}: ${histories.retryCauses.slice(0, 8).join('; ')}`,
          chaos.phases.join(', '),
        ].join('\n  '),
      );
      finished++;
    },
    PLAN.testTimeoutMs,
  );
});
