/**
 * The production topology, for real: Debian's PostgreSQL, the Temporal server v1.29.1 on it
 * with SQL advanced visibility, the Web UI and three turnpike worker processes — started by the
 * same code and files as `npm run cluster` (scripts/temporal-cluster.ts, deploy/).
 *
 * 1. The README's operator commands (Temporal CLI) and the Web UI's workflow filter work on SQL
 *    visibility, not only on the dev server's.
 * 2. 100 concurrent turns park twice each on an approval-gated charge; an approver finds them
 *    only through visibility listings by search attribute, as an operator or dashboard would.
 *    Meanwhile one worker is SIGKILLed while it runs charges and the Temporal server process is
 *    SIGKILLed and started again. Every turn completes, no approved charge is lost or takes
 *    effect twice, no denied charge runs.
 * The workers and the test's client keep large content in a table of the same PostgreSQL
 * (TURNPIKE_CONTENT_STORE=postgresql://…): every turn of 2. carries a 300 KB document by
 * reference, which each of its model steps reads back from there.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { approveToolCallUpdate, contentRef, createTurnpikeDataConverter, PostgresContentStore, readVerified, storeContent, turnStateQuery, type DocumentPart, type agentTurn, type AgentTurnInput, type AgentTurnResult, type Message, type ToolMessage, type TurnState } from '../../client/index.js';
import { bundleWorkflows } from '../../worker/index.js';
import { DYNAMIC_CONFIG_FILE, ROOT, randomClusterPorts, startCluster, type Cluster } from '../../scripts/temporal-cluster.js';

const TASK_QUEUE = 'cluster';
const TURNS = 100;
const WORKERS = 3;
/** Every DENY_EVERY-th turn's second charge is denied: a denied charge must never run. */
const DENY_EVERY = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
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
    workers: WORKERS,
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

function startTurn(workflowId: string, text: string, extra: Partial<AgentTurnInput> = {}, document?: DocumentPart): Promise<WorkflowHandle<typeof agentTurn>> {
  return client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{
      model: { provider: 'scripted', model: 'demo' },
      messages: [{ role: 'user', content: document ? [{ type: 'text', text }, document] : text }],
      // A model call whose attempt is lost — its worker SIGKILLed, or the poll reply carrying it
      // lost while the server restarts — is retried only when its start-to-close timeout passes:
      // 5 minutes by default, for slow LLMs. The scripted model answers at once, so 10s here.
      modelCallOptions: { startToCloseTimeout: '10s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
      ...extra,
    }],
  });
}

async function pendingOf(handle: WorkflowHandle<typeof agentTurn>, count = 1): Promise<TurnState['pending']> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const state = await handle.query(turnStateQuery).catch(() => undefined);
    if (state && state.pending.length >= count) return state.pending;
    await sleep(100);
  }
  throw new Error(`${handle.workflowId} never parked ${count} call(s)`);
}

/** Workflow ids a visibility query lists; SQL visibility is updated asynchronously, so callers poll. */
async function listIds(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query, pageSize: 500 })) ids.push(execution.workflowId);
  return ids.sort();
}

async function eventually<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      value = await read();
      if (done(value)) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(250);
  }
  throw new Error(`never saw ${what}; last: ${JSON.stringify(value)} ${lastError ? String(lastError) : ''}`);
}

/** For a failure message: what the server itself says about turns that visibility does not list. */
async function diagnose(ids: string[], query: string): Promise<string> {
  const listed = new Set(await listIds(query).catch(() => []));
  const missing = ids.filter((id) => !listed.has(id)).slice(0, 5);
  const reports = await Promise.all(
    missing.map(async (id) => {
      const handle = client.workflow.getHandle(id);
      const description = await handle.describe().catch((error: unknown) => String(error));
      if (typeof description === 'string') return `${id}: ${description}`;
      const history = await handle.fetchHistory().catch(() => undefined);
      const lastEvents = (history?.events ?? []).slice(-6).map((event) => `${event.eventId}:${event.eventType}`).join(' ');
      const raw = description.raw;
      return `${id}: ${description.status.name}, search attributes ${JSON.stringify(description.searchAttributes)}, pending activities ${JSON.stringify(raw.pendingActivities?.map((activity) => ({ type: activity.activityType?.name, state: activity.state, attempt: activity.attempt, failure: activity.lastFailure?.message })))}, pending workflow task ${JSON.stringify(raw.pendingWorkflowTask ? { state: raw.pendingWorkflowTask.state, attempt: raw.pendingWorkflowTask.attempt } : null)}, last events ${lastEvents}`;
    }),
  );
  return `not listed by ${query}: ${ids.filter((id) => !listed.has(id)).length}\n${reports.join('\n')}`;
}

function everyCallAnsweredOnce(messages: Message[]): boolean {
  return messages.every((message, index) => {
    if (message.role !== 'assistant') return true;
    const ids = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
    if (ids.length === 0) return true;
    const next = messages[index + 1] as ToolMessage | undefined;
    return next?.role === 'tool' && JSON.stringify(next.content.map((part) => part.toolCallId)) === JSON.stringify(ids);
  });
}

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
    const alpha = await startTurn('cli-alpha', 'use charge_card with {"amount": 5}', { conversationId });
    const bravo = await startTurn('cli-bravo', 'use charge_card with {"amount": 6}');
    const asking = await startTurn('cli-client-tool', 'ask me "first?" and ask me "second?"');
    const doomed = await startTurn('cli-cancel', 'use charge_card with {"amount": 7}');
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

  it(`completes ${TURNS} parked turns through a SIGKILLed worker and a restarted server, each approved charge taking effect once`, async () => {
    const began = Date.now();
    const phases: string[] = [];
    // Progress for the log and the README's figures; nothing here is asserted on.
    const mark = (what: string) => phases.push(`${what} at ${((Date.now() - began) / 1000).toFixed(0)}s`);
    const ids = Array.from({ length: TURNS }, (_, index) => `cluster-turn-${index}`);
    const indexOf = new Map(ids.map((id, index) => [id, index]));
    // A 300 KB document every turn carries by reference, kept in the cluster's PostgreSQL.
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(300 * 1024)]);
    const key = await storeContent(contentStore, pdf);
    const document: DocumentPart = { type: 'document', source: { type: 'stored', ref: contentRef(key), mediaType: 'application/pdf', bytes: pdf.length } };
    // Two approval-gated charges per turn, one step after the other: every turn parks twice.
    const handles = await Promise.all(
      ids.map((id, index) =>
        startTurn(id, `use charge_card with {"amount": ${index + 1}} then use charge_card with {"amount": ${index + 1001}}`, { conversationId: `cluster-conversation-${index % 10}` }, document),
      ),
    );

    // All parked, found by search attributes on PostgreSQL visibility.
    const parkedQuery = `AgentTurnStatus="awaiting-input" AND TaskQueue="${TASK_QUEUE}"`;
    await eventually('all turns parked in visibility', () => client.workflow.count(parkedQuery), ({ count }) => count === TURNS, 180_000).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await diagnose(ids, parkedQuery)}`);
    });
    mark(`${TURNS} parked`);
    expect((await client.workflow.count(`AgentPendingTools="charge_card" AND TaskQueue="${TASK_QUEUE}"`)).count).toBe(TURNS);
    expect(await listIds(`AgentConversationId="cluster-conversation-3" AND TaskQueue="${TASK_QUEUE}"`)).toEqual(ids.filter((_, index) => index % 10 === 3).sort());

    // The approver knows nothing but what visibility lists; each decision is an update.
    const decisions = new Map<string, { approved: boolean }>();
    let listings = 0;
    let failedListings = 0;
    let approving = true;
    const decide = async (workflowId: string) => {
      const handle = client.workflow.getHandle<typeof agentTurn>(workflowId);
      // Queries and updates wait for a worker; while none answers (restarts), retry next round.
      const state = await client.withDeadline(Date.now() + 5_000, () => handle.query(turnStateQuery)).catch(() => undefined);
      for (const call of state?.pending ?? []) {
        if (!call.approvalId || decisions.has(call.approvalId)) continue;
        const amount = (call.input as { amount: number }).amount;
        const approved = !(amount > 1000 && indexOf.get(workflowId)! % DENY_EVERY === DENY_EVERY - 1);
        await client
          .withDeadline(Date.now() + 10_000, () =>
            handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: call.approvalId!, approved, approver: 'cluster-test', ...(approved ? {} : { reason: 'over budget' }) }] }),
          )
          .then(
            () => decisions.set(call.approvalId!, { approved }),
            (error: unknown) => {
              // An update accepted just before a restart may have lost its reply: the retry then
              // learns the decision is already made.
              if (/ApprovalAlreadyDecided|already decided/i.test(String((error as { cause?: unknown }).cause ?? error))) decisions.set(call.approvalId!, { approved });
            },
          );
      }
    };
    const approver = (async () => {
      while (approving) {
        // While the server restarts, a listing fails; the next round lists again.
        const listed = await listIds(parkedQuery).catch(() => {
          failedListings++;
          return [] as string[];
        });
        listings++;
        // At most 20 turns at a time: the queries replay evicted turns on the workers.
        for (let offset = 0; offset < listed.length && approving; offset += 20) await Promise.all(listed.slice(offset, offset + 20).map(decide));
        await sleep(250);
      }
    })();

    // The records are shared with the first test: count only this test's turns.
    const ours = (key: string) => key.startsWith('cluster-turn-');
    const attempts = () => {
      try {
        return readFileSync(path.join(records, 'attempts.log'), 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { key: string; pid: number })
          .filter((attempt) => ours(attempt.key));
      } catch {
        return [];
      }
    };
    const waitForAttempts = (count: number) => eventually(`${count} charge attempts`, async () => attempts().length, (seen) => seen >= count, 300_000);

    // Kill the worker that just began a charge: SIGKILL, so the charge is cut off mid-way.
    await waitForAttempts(40);
    const workerPids = new Set(cluster!.workers.map((worker) => worker.pid));
    const busyPid = attempts().reverse().find((attempt) => workerPids.has(attempt.pid))!.pid;
    const victim = cluster!.workers.find((worker) => worker.pid === busyPid)!;
    await victim.kill();
    const attemptsAtWorkerKill = attempts().length;
    mark('worker SIGKILLed');

    // Then crash the Temporal server itself and start it again on the same database and ports.
    await waitForAttempts(attemptsAtWorkerKill + 40);
    await cluster!.server.kill();
    const attemptsAtServerKill = attempts().length;
    mark('server SIGKILLed');
    const downAt = Date.now();
    await cluster!.restartServer();
    const downSeconds = (Date.now() - downAt) / 1000;

    // Results: each turn's result is read with retries, since the client may still be reconnecting.
    const resultOf = async (handle: WorkflowHandle<typeof agentTurn>): Promise<AgentTurnResult> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await handle.result();
        } catch (error) {
          if (attempt >= 20) throw error;
          await sleep(1_000);
        }
      }
    };
    const results = await Promise.race([
      Promise.all(handles.map(resultOf)),
      sleep(15 * 60_000).then(() => {
        throw new Error(`turns did not finish within 15 minutes; ${decisions.size} decisions, ${attempts().length} charge attempts`);
      }),
    ]);
    approving = false;
    await approver;
    mark('all results');

    // Every turn completed with a valid history and the expected outcomes.
    expect(results.map((result) => result.status)).toEqual(Array(TURNS).fill('completed'));
    expect(results.every((result) => everyCallAnsweredOnce(result.messages))).toBe(true);
    // Every model step read the document back from PostgreSQL (a step that cannot fails with
    // ContentMissing, and its turn would not have completed), and it is there unchanged.
    expect(Buffer.from(await readVerified(contentStore, key)).equals(pdf)).toBe(true);
    const expectedOutcomes = ids.map((_, index) => (index % DENY_EVERY === DENY_EVERY - 1 ? 'approved,denied' : 'approved,approved'));
    expect(results.map((result) => result.toolCalls.map((call) => call.outcome).join())).toEqual(expectedOutcomes);

    // Every decision in the results is one the approver sent after finding the turn by visibility.
    const recorded = results.flatMap((result) => result.toolCalls.map((call) => call.approval));
    expect(recorded.every((approval) => approval?.approver === 'cluster-test' && approval.automatic === false)).toBe(true);
    expect(recorded).toHaveLength(TURNS * 2);

    // Effects: exactly one per approved charge, none for a denied one.
    const keysOf = (outcome: string) =>
      results.flatMap((result, index) => result.toolCalls.filter((call) => call.outcome === outcome).map((call) => `${ids[index]}/${call.toolCallId}`)).sort();
    const approvedKeys = keysOf('approved');
    const deniedKeys = keysOf('denied');
    const effects = readdirSync(path.join(records, 'effects')).map(decodeURIComponent).filter(ours).sort();
    const allAttempts = attempts();
    expect(approvedKeys).toHaveLength(TURNS * 2 - TURNS / DENY_EVERY);
    const lost = approvedKeys.filter((key) => !effects.includes(key));
    const unexpected = effects.filter((key) => !approvedKeys.includes(key));
    expect(lost).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(allAttempts.filter((attempt) => deniedKeys.includes(attempt.key))).toEqual([]);
    // Every charge result the turns saw came from that key's one effect.
    const chargeOutputs = results.flatMap((result) => result.toolCalls.filter((call) => call.outcome === 'approved').map((call) => call.output as { charged: number }));
    expect(chargeOutputs.every((output) => typeof output.charged === 'number')).toBe(true);

    // Visibility caught up after the restart: nothing parked, every turn completed.
    await eventually('visibility to show every turn completed', () => client.workflow.count(`AgentTurnStatus="completed" AND TaskQueue="${TASK_QUEUE}" AND WorkflowId STARTS_WITH "cluster-turn-"`), ({ count }) => count === TURNS);
    expect((await client.workflow.count(parkedQuery)).count).toBe(0);

    const interrupted = new Set(allAttempts.filter((attempt) => attempt.pid === busyPid).map((attempt) => attempt.key));
    const retriedElsewhere = [...interrupted].filter((key) => allAttempts.some((attempt) => attempt.key === key && attempt.pid !== busyPid));
    const retriedKeys = new Set(allAttempts.map((attempt) => attempt.key)).size;
    console.log(
      `cluster: ${TURNS} turns, ${WORKERS} workers, 1 worker SIGKILLed (after ${attemptsAtWorkerKill} charge attempts; ${retriedElsewhere.length} of its charges retried on another worker), ` +
        `server SIGKILLed after ${attemptsAtServerKill} attempts and serving again after ${downSeconds.toFixed(1)}s; ` +
        `${recorded.length} decisions (${approvedKeys.length} approved, ${deniedKeys.length} denied; ${recorded.length - decisions.size} of their update replies lost to the restart) from ${listings} visibility listings (${failedListings} failed); ` +
        `${allAttempts.length} charge attempts over ${retriedKeys} keys, ${effects.length} effects (lost ${lost.length}, duplicated ${unexpected.length}), denied charges run: 0; ` +
        phases.join(', '),
    );
    finished++;
  });
});
