/**
 * `npm start`: the order desk end to end against the cluster the environment names
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE). It runs the worker, starts an order workflow whose
 * agent turn parks on a $250 refund, lists the parked call through the HTTP API, approves it
 * as the lead through `turnpike/client`, and prints the order workflow's result as JSON. The
 * same desk is published to other agents over A2A and as an MCP tool; their official clients
 * read its Agent Card and its tool list.
 *
 * The model is turnpike's offline `scripted` demo model unless ORDER_DESK_MODEL names a real
 * one (`openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-6`; the key comes from the environment).
 */
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { type ModelSettings, type PendingToolCall } from 'turnpike';
import { buildApi } from 'turnpike/api';
import { TurnpikeClient, connectTemporal } from 'turnpike/client';
import { connectionOptionsFromEnvironment, TurnpikePlugin } from 'turnpike/worker';
import { sentNotices } from './activities.js';
import { agentTurnId, refundOrder } from './order-workflow.js';
import { refundsMade } from './tools.js';
import { createOrderDeskWorker } from './worker.js';

function modelFromEnvironment(): ModelSettings {
  const [provider = 'scripted', ...model] = (process.env.ORDER_DESK_MODEL ?? 'scripted:demo').split(':');
  if (provider !== 'openai' && provider !== 'anthropic' && provider !== 'scripted') throw new Error(`unknown provider ${provider}`);
  return { provider, model: model.join(':') || 'demo' };
}

async function waitForApproval(turnpike: TurnpikeClient, turnId: string): Promise<PendingToolCall> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const state = await turnpike.turnState(turnId).catch(() => undefined);   // the child may not have started yet
    const approval = state?.pending.find((call) => call.kind === 'approval');
    if (approval) return approval;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`turn ${turnId} did not park for approval`);
}

/** The HTTP API's listing of parked calls (visibility catches up within moments of the park). */
async function waitForListing(api: Awaited<ReturnType<typeof buildApi>>, turnId: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const listed = await api.inject({ url: '/api/approvals', headers: { authorization: 'Bearer lead-token' } });
    const count = (listed.json() as { calls: Array<{ turnWorkflowId: string }> }).calls.filter((call) => call.turnWorkflowId === turnId).length;
    if (count > 0) return count;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return 0;
}

/** The desk as other agents see it: its A2A Agent Card and its MCP tools, read with each protocol's own client. */
async function publishedDesk(base: string): Promise<{ a2aAgent: string; mcpTools: string[] }> {
  const authorized: typeof fetch = (url, init) => fetch(url, { ...init, headers: { ...init?.headers, authorization: 'Bearer lead-token' } });
  const a2a = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] }).createFromUrl(`${base}/api/a2a/desk/`);
  const card = await a2a.getAgentCard();
  const mcp = new McpClient({ name: 'order-desk-run', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers: { authorization: 'Bearer lead-token' } } }));
  try {
    const { tools } = await mcp.listTools();
    return { a2aAgent: card.name, mcpTools: tools.map((tool) => tool.name) };
  } finally {
    await mcp.close();
  }
}

async function main(): Promise<void> {
  const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
  const taskQueue = process.env.ORDER_DESK_TASK_QUEUE ?? 'order-desk';
  const workerConnection = await NativeConnection.connect(connectionOptions);
  // Takes history pages as large as Temporal sends (gRPC's default stops at 4 MiB).
  const connection = await connectTemporal(connectionOptions as ConnectionOptions);
  // The same plugin on the Client gives it turnpike's payload codec.
  const client = new Client({ connection, namespace, plugins: [new TurnpikePlugin()] });
  const turnpike = new TurnpikeClient({ client, taskQueue });
  const desk = {
    description: 'Looks up orders and issues refunds, which a lead approves',
    model: modelFromEnvironment(),
    tools: ['lookup_order', 'issue_refund'],
  };
  const api = await buildApi({
    client: turnpike,
    tokens: new Map([['lead-token', 'lead@orders.example']]),
    a2a: { agents: { desk } },
    mcp: { agents: { desk } },
  });
  try {
    const worker = await createOrderDeskWorker({ connection: workerConnection, namespace, taskQueue });
    const result = await worker.runUntil(async () => {
      const orderWorkflowId = `order-1001-refund-${Date.now()}`;
      const order = await client.workflow.start(refundOrder, {
        taskQueue,
        workflowId: orderWorkflowId,
        args: [{ orderId: '1001', request: 'look up order 1001 then refund $250 on order 1001', model: modelFromEnvironment() }],
      });
      const turnId = agentTurnId(orderWorkflowId);
      const approval = await waitForApproval(turnpike, turnId);

      const listedByApi = await waitForListing(api, turnId);
      const dashboard = await api.inject({ url: '/' });
      const published = await publishedDesk(await api.listen({ host: '127.0.0.1', port: 0 }));
      await turnpike.approveToolCall(turnId, {
        approvalId: approval.approvalId!,
        approved: true,
        approver: 'lead@orders.example',
        inputHash: approval.inputHash,
        reason: 'customer is right',
      });
      return {
        order: await order.result(),
        turnId,
        parked: { toolName: approval.toolName, input: approval.input, reason: approval.reason },
        listedByApi,
        dashboardServed: dashboard.statusCode === 200 && dashboard.body.includes('<html'),
        ...published,
        refundsMade,
        sentNotices,
      };
    });
    console.log(JSON.stringify(result));
  } finally {
    await api.close();
    await connection.close();
    await workerConnection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
