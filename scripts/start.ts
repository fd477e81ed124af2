/**
 * `npm start`: everything a new user needs to see turnpike work.
 *
 * 1. A Temporal dev server (SQLite under .turnpike/, so parked turns survive a restart;
 *    Web UI on :8233), unless TEMPORAL_ADDRESS names a cluster to use instead.
 * 2. A turnpike worker with the demo tools, and the HTTP API in the same process, sharing the
 *    in-process live channel so streamed deltas reach readers as the model writes them.
 * 3. A demo turn that parks for approval, and the commands to approve it.
 * Ctrl-C stops the worker and the dev server.
 */
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, type ConnectionOptions } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { modelFromEnvironment } from '../cli/default-model.js';
import { startDevServer, type DevServer } from './dev-server.js';
import { TemporalCliUnavailableError, ensureTemporalCli } from './temporal-cli.js';
import { randomBytes } from 'node:crypto';
// The package's public entry points, as an application would import them.
import { buildApi, parseTokenMap } from '../api/index.js';
import { AGENT_TURN_WORKFLOW, DEFAULT_TASK_QUEUE, TurnpikeClient, connectTemporal, inProcessLiveDeltas, turnpikeDataConverter, type agentTurn } from '../client/index.js';
import { connectionOptionsFromEnvironment, createWorker } from '../worker/index.js';
import { demoTools } from '../demo/tools.js';
import { waitInWindows } from '../connection/windowed-wait.js';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DEMO_REQUEST = 'look up order 1001 then refund $250 on order 1001';

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function main(): Promise<void> {
  // Worker lifecycle chatter hides the instructions below; warnings and errors still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  let server: DevServer | undefined;
  const environment = connectionOptionsFromEnvironment();
  let address = environment.connectionOptions.address!;
  const namespace = environment.namespace;
  if (!process.env.TEMPORAL_ADDRESS) {
    if (await portInUse(7233)) {
      console.error('Something already listens on 127.0.0.1:7233. If it is a Temporal server, use it with:\n  TEMPORAL_ADDRESS=127.0.0.1:7233 npm start');
      process.exit(1);
    }
    const dbFile = path.join(ROOT, '.turnpike', 'temporal.sqlite');
    const existed = existsSync(dbFile);
    console.log(`Starting the Temporal dev server (data: ${path.relative(ROOT, dbFile)}${existed ? ', kept from earlier runs' : ''})...`);
    server = await startDevServer({ port: 7233, uiPort: 8233, headless: false, dbFile, namespace, log: (line) => console.log(line) });
    address = server.address;
  }

  const nativeConnection = await NativeConnection.connect({ ...environment.connectionOptions, address });
  const connection = await connectTemporal({ ...(environment.connectionOptions as ConnectionOptions), address });
  const client = new Client({ connection, namespace, dataConverter: turnpikeDataConverter });
  try {
    // The worker and the API share this process: streamed deltas reach the dashboard and /api/chat
    // through the in-process live channel, beside the durable stream (docs/streaming.md).
    const worker = await createWorker({ tools: demoTools, connection: nativeConnection, namespace, liveDeltas: inProcessLiveDeltas });
    const running = worker.run();
    const cli = server?.cli ?? (await ensureTemporalCli().catch(() => 'temporal'));
    const temporal = cli === 'temporal' || path.basename(cli) === cli ? 'temporal' : cli;

    const earlier: string[] = [];
    for await (const execution of client.workflow.list({ query: `WorkflowType="${AGENT_TURN_WORKFLOW}" AND AgentTurnStatus="awaiting-input"` })) {
      earlier.push(execution.workflowId);
    }

    const model = modelFromEnvironment();
    const workflowId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const handle = await client.workflow.start<typeof agentTurn>(AGENT_TURN_WORKFLOW, {
      taskQueue: worker.options.taskQueue ?? DEFAULT_TASK_QUEUE,
      workflowId,
      args: [{ model, messages: [{ role: 'user', content: DEMO_REQUEST }] }],
    });
    // Aborted before the connection closes, so Ctrl-C does not leave a long poll retrying.
    const stopWatching = new AbortController();
    waitInWindows(client, stopWatching.signal, () => handle.result()).then(
      (result) => result && console.log(`\n✔ ${workflowId} finished (${result.status}): ${result.text}\n`),
      (error: unknown) => {
        if (!stopWatching.signal.aborted) console.log(`\n✘ ${workflowId} failed: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );

    const ui = server?.uiUrl ?? '(your cluster\'s Web UI)';
    // The HTTP API and approval dashboard; a one-off token for this run unless you set your own.
    const devToken = randomBytes(9).toString('base64url');
    const tokens = parseTokenMap(process.env.TURNPIKE_API_TOKENS ?? `${devToken}:you`);
    const api = await buildApi({
      client: new TurnpikeClient({ client, taskQueue: worker.options.taskQueue, liveDeltas: inProcessLiveDeltas }),
      tokens,
      // The one-off token's holder reads every turn, as the developer running turnpike expects.
      ...(process.env.TURNPIKE_API_TOKENS ? {} : { access: { admins: ['you'] } }),
      decisionSecret: process.env.TURNPIKE_DECISION_SECRET,
      ...(process.env.TURNPIKE_STREAM_SECRET ? { streamSecret: process.env.TURNPIKE_STREAM_SECRET } : {}),
      ...(process.env.TURNPIKE_SESSION_SECRET ? { sessionSecret: process.env.TURNPIKE_SESSION_SECRET } : {}),
      temporalUiUrl: server?.uiUrl ?? process.env.TEMPORAL_UI_URL,
      namespace,
      // The dashboard's chats answer on the demo turn's model.
      chatModel: model,
    });
    const apiPort = Number(process.env.TURNPIKE_API_PORT ?? 3000);
    const dashboard = await api.listen({ host: '127.0.0.1', port: apiPort });
    console.log(`
turnpike is running.
  Temporal:     ${address} (namespace ${namespace})${server ? `\n  Web UI:       ${ui}` : ''}
  Worker:       task queue "${worker.options.taskQueue}", demo tools: ${demoTools.map((tool) => tool.name).join(', ')}
  Dashboard:    ${dashboard}${process.env.TURNPIKE_API_TOKENS ? ' (sign in with a token from TURNPIKE_API_TOKENS)' : `  (sign in with token ${devToken})`}
  Model:        ${model.provider}/${model.model}${model.provider === 'scripted' ? ' (offline demo model, not an LLM; set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)' : ''}
${earlier.length > 0 ? `  Still parked from earlier runs: ${earlier.length} turn(s), e.g. ${earlier.slice(0, 3).join(', ')}\n` : ''}
A demo turn is running: "${DEMO_REQUEST}"
It looks the order up, then parks: refunds above $100 need a person's approval.
  Watch it:     ${server ? `${ui}/namespaces/${namespace}/workflows/${workflowId}` : workflowId}

Approve it in the dashboard (${dashboard}), or in another terminal:
  # the parked turns, as an operator finds them
  ${temporal} workflow list --address ${address} --query 'AgentTurnStatus="awaiting-input"'
  # what the demo turn waits for (note its approvalId)
  ${temporal} workflow query --address ${address} --workflow-id ${workflowId} --name turnState
  # approve it (an update: answers at once whether the decision was accepted)
  ${temporal} workflow update execute --address ${address} --workflow-id ${workflowId} --name approveToolCall \\
      --input '{"approvalId":"<approvalId>","approved":true,"approver":"you"}'

Ctrl-C stops the worker${server ? ' and the dev server; parked turns stay in .turnpike/ for the next npm start' : ''}.
`);
    await running;
    stopWatching.abort();
    await api.close();
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server?.stop();
    console.log('turnpike stopped.');
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof TemporalCliUnavailableError ? error.message : error);
  process.exit(1);
});
