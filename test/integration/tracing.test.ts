/**
 * A turn is one trace when the worker and client use `OpenTelemetryPlugin` next to
 * `TurnpikePlugin`: the client's start, the workflow run, each model call (model, tokens,
 * finish reason), each tool call (tool, result) and each park (approval id, outcome, approver,
 * wait), and the approval's update.
 */
import { randomUUID } from 'node:crypto';
import { context as otelContext, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approveToolCallUpdate, type agentTurn } from '../../client/index.js';
import { TurnpikePlugin, WORKFLOWS_PATH } from '../../worker/index.js';
import { testTools } from '../support/test-tools.js';
import { waitForPending } from '../support/turnpike-harness.js';

const exporter = new InMemorySpanExporter();
const spanProcessor = new SimpleSpanProcessor(exporter);
const provider = new BasicTracerProvider({ spanProcessors: [spanProcessor] });
// What an application's OpenTelemetry setup (e.g. the NodeSDK) registers.
trace.setGlobalTracerProvider(provider);
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const taskQueue = `tracing-${randomUUID()}`;
let connection: Connection;
let nativeConnection: NativeConnection;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const otel = new OpenTelemetryPlugin({ resource: new Resource({ 'service.name': 'turnpike-test' }), spanProcessor });
  connection = await Connection.connect({ address });
  nativeConnection = await NativeConnection.connect({ address });
  client = new Client({ connection, namespace, plugins: [otel, new TurnpikePlugin()] });
  worker = await Worker.create({
    connection: nativeConnection,
    namespace,
    taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    plugins: [otel, new TurnpikePlugin({ tools: testTools })],
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await nativeConnection?.close();
  await connection?.close();
});

describe('tracing', () => {
  it('records a turn as one trace: start, run, model calls, tool calls and the approval', async () => {
    const turnId = `traced-${randomUUID()}`;
    const handle = await client.workflow.start<typeof agentTurn>('agentTurn', {
      taskQueue,
      workflowId: turnId,
      args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: 'look up order 1001 then refund $250 on order 1001' }] }],
    });
    const [pending] = await waitForPending(handle);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    await spanProcessor.forceFlush();

    const starts = exporter.getFinishedSpans().filter((span) => span.name === 'StartWorkflow:agentTurn');
    expect(starts).toHaveLength(1);
    const [start] = starts;
    const traceId = start.spanContext().traceId;
    const inTrace = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    const named = (name: string) => inTrace.filter((span) => span.name === name);

    expect(named('RunWorkflow:agentTurn')).toHaveLength(1);
    const modelCalls = named('RunActivity:callModel');
    expect(modelCalls).toHaveLength(result.steps);
    expect(modelCalls.map((span) => span.attributes['gen_ai.request.model'])).toEqual(['demo', 'demo', 'demo']);
    const tokens = (key: string) => modelCalls.reduce((sum, span) => sum + Number(span.attributes[key]), 0);
    expect(tokens('gen_ai.usage.input_tokens')).toBe(result.usage.inputTokens);
    expect(tokens('gen_ai.usage.output_tokens')).toBe(result.usage.outputTokens);
    expect(modelCalls.map((span) => span.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool-calls'], ['tool-calls'], ['stop']]);

    const toolCalls = named('RunActivity:executeTool').map((span: ReadableSpan) => [span.attributes['turnpike.tool.name'], span.attributes['turnpike.tool.result']]);
    expect(toolCalls).toEqual([
      ['lookup_order', 'ok'],
      ['issue_refund', 'ok'],
    ]);
    // The park, from the refund parking to the approval: a child of the workflow's run span.
    const [run] = named('RunWorkflow:agentTurn');
    const parks = named('Park:issue_refund');
    expect(parks).toHaveLength(1);
    expect(parks[0].parentSpanId).toBe(run.spanContext().spanId);
    expect(parks[0].attributes).toMatchObject({
      'turnpike.tool.name': 'issue_refund',
      'turnpike.park.kind': 'approval',
      'turnpike.approval.id': pending.approvalId,
      'turnpike.policy.reason': 'refunds above $100 need a person',
      'turnpike.park.outcome': 'approved',
      'turnpike.approval.approver': 'alice',
    });
    expect(parks[0].attributes['turnpike.park.wait_ms']).toBeGreaterThanOrEqual(0);

    // The decision is the caller's own request, so its spans form the caller's trace.
    expect(exporter.getFinishedSpans().filter((span) => span.name === 'HandleUpdate:approveToolCall')).toHaveLength(1);
  });
});
