/**
 * turnpike from outside the repository, as a team installs it: `npm pack`, the tarball
 * installed into a fresh copy of examples/order-desk (its own package.json and strict NodeNext
 * tsconfig), type-checked, built and run against the test dev server. The app's own worker has
 * its own workflow and activity plus `TurnpikePlugin`; its workflow runs an agent turn as a
 * child, the turn parks on a refund, the app approves it through `turnpike/client`, and the
 * order workflow completes with the turn's typed result. A type error in the published .d.ts,
 * a file missing from the tarball or a dependency left out of package.json fails this test.
 *
 * A second fresh app installs turnpike with one provider SDK (openai) and no HTTP API: the other
 * provider, the MCP SDK and the HTTP API's packages must be absent from its node_modules, its
 * strict type-check (library checks on) must pass, a wrong client-tool output, a misspelt model
 * option and a wrong use of a typed output must fail to compile, and the features whose package is
 * missing must fail naming it. Its worker also runs, from the package: an agent tool
 * (`defineAgentTool`) whose sub-agent's approval is listed with its parent turn and approved, a
 * typed final answer read as its schema's type, and a budget that parks and is extended.
 *
 * A third fresh app installs turnpike with `@ai-sdk/google` as its only provider package (no
 * openai, no @anthropic-ai/sdk; test/support/packed-gemini-app.ts): it type-checks with library
 * checks on, and its worker runs a Gemini turn through an approval against the Gemini fake.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { packedTurnpike } from '../support/packed-tarball.js';
import { APP_TURNS_FILE, cleanEnvironment, installApp, installExampleApp, STRICT_APP_TSCONFIG, type PackedApp } from '../support/packed-app.js';
import { startFakeGemini, type FakeGemini } from '../fake-provider/gemini.js';
import { GEMINI_APP_FILES } from '../support/packed-gemini-app.js';

let directory: string;
let tarball: string;

let files: string[];

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'turnpike-packed-'));
  // One pack per run, shared with the other files that install the package (packed-tarball.ts).
  ({ tarball, files } = await packedTurnpike(cleanEnvironment()));
}, 600_000);

afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('the packed package in a fresh app', { timeout: 300_000 }, () => {
  let app: PackedApp;

  beforeAll(async () => {
    app = await installExampleApp(path.join(directory, 'app'), tarball);
  }, 480_000);

  it('ships the built entry points, the dashboard and the CLI, and no tests or sources', () => {
    for (const entry of ['index', 'worker/index', 'client/index', 'workflows/index', 'api/index']) {
      expect(files).toContain(`dist/${entry}.js`);
      expect(files).toContain(`dist/${entry}.d.ts`);
    }
    expect(files).toContain('dist/workflows/preload.js');
    expect(files).toContain('dist/api/dashboard/index.html');
    expect(files).toContain('bin/turnpike.js');
    expect(files.filter((file) => /^(test|bench|scripts|demo|examples)\/|\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
    // Source maps would point at those unshipped sources.
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
  });

  it('installs one copy of the Temporal SDK: npm ls finds a single @temporalio/workflow, with no overrides in the app', async () => {
    const manifest = JSON.parse(readFileSync(path.join(app.folder, 'package.json'), 'utf8'));
    expect(manifest.overrides).toBeUndefined();
    const { stdout } = await app.run('npm', ['ls', '--all', '--parseable', '@temporalio/workflow']);
    expect(stdout.split('\n').filter(Boolean).map((location) => path.relative(app.folder, location))).toEqual([path.join('node_modules', '@temporalio', 'workflow')]);
    const tree = await app.run('npm', ['ls', '--all', '--parseable']);
    expect(tree.stdout.split('\n').filter((location) => location.endsWith(`${path.sep}workflow-streams`))).toEqual([]);
  });

  it('type-checks with strict NodeNext, and the published .d.ts files have no errors of their own', async () => {
    await app.run('npx', ['tsc', '-p', '.', '--noEmit']);
    // With library checks on, every error must come from other packages' typings, never turnpike's.
    const { stdout: checked } = await app.outcome('npx', ['tsc', '-p', '.', '--noEmit', '--skipLibCheck', 'false']);
    expect(checked.split('\n').filter((line) => line.includes('node_modules/turnpike/'))).toEqual([]);
  });

  const taskQueue = `order-desk-${randomUUID()}`;

  it('runs a turn started by the app\'s own workflow: parked, approved through turnpike/client, completed', async () => {
    await app.run('npx', ['tsc', '-p', '.']);
    const result = (await app.runScript({ ORDER_DESK_TASK_QUEUE: taskQueue })) as Record<string, unknown> & { turnId: string };
    expect(result.parked).toEqual({ toolName: 'issue_refund', input: { orderId: '1001', amount: 250 }, reason: 'refunds above $100 need a lead' });
    expect(result.listedByApi).toBe(1);
    expect(result.dashboardServed).toBe(true);
    // Other agents find the same desk with the protocols' own clients, from the packed turnpike/api.
    expect(result.a2aAgent).toBe('desk');
    expect(result.mcpTools).toEqual(['desk']);
    expect(result.order).toMatchObject({ orderId: '1001', turnStatus: 'completed', refunded: true, approvedBy: 'lead@orders.example' });
    // The approved refund ran exactly once, with the turn's idempotency key, and the app's own activity ran after the turn.
    expect(result.refundsMade).toEqual([{ orderId: '1001', amount: 250, idempotencyKey: expect.stringMatching(new RegExp(`^${result.turnId}/`)) }]);
    expect(result.sentNotices).toEqual(['1001: Your refund is on its way.']);

    // The package's CLI finds the finished turn on the app's task queue.
    const shown = await app.run('npx', ['turnpike', 'show', result.turnId, '--json'], {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: taskQueue,
    });
    expect(JSON.parse(shown.stdout)).toMatchObject({ turnId: result.turnId, execution: 'COMPLETED', result: { status: 'completed' } });
  });

  it("replays the app's histories with `turnpike replay`: --save keeps a set, --from replays it, reports alone on stdout, a bad file named", async () => {
    // The layout that mixed two copies of protobufjs: grpc's 7 on top, the Temporal packages' own 8 nested.
    const topLevel = JSON.parse(readFileSync(path.join(app.folder, 'node_modules', 'protobufjs', 'package.json'), 'utf8')) as { version: string };
    expect(topLevel.version).toMatch(/^7\./);
    const temporal = { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), NO_COLOR: '1' };
    const replay = (args: string[]) => app.outcome('npx', ['turnpike', 'replay', '--workflows', 'dist/workflows.js', ...args], 240_000, temporal);
    const saved = path.join(app.folder, 'replay', 'prod');

    const fetched = await replay(['--query', `TaskQueue="${taskQueue}"`, '--save', saved]);
    expect(fetched, fetched.stderr).toMatchObject({ code: 0 });
    const lines = fetched.stdout.trim().split('\n');
    expect(lines.slice(0, -1).sort()).toEqual([expect.stringMatching(/^ok {4}order-1001-refund-\d+ \(run /), expect.stringMatching(/^ok {4}order-1001-refund-\d+\/agent \(run /)]);
    expect(lines.at(-1)).toBe(`2 histories checked, 0 did not replay; saved to ${saved}`);
    // The replay worker's INFO lines are nowhere; only warnings could reach stderr.
    expect(`${fetched.stdout}${fetched.stderr}`).not.toContain('[INFO]');
    expect(readdirSync(saved).sort()).toEqual([expect.stringMatching(/^0001-order-1001-refund-\d+(_agent)?\.json$/), expect.stringMatching(/^0002-order-1001-refund-\d+(_agent)?\.json$/), 'workflow-ids.tsv']);

    const offline = await replay(['--from', saved]);
    expect(offline, offline.stderr).toMatchObject({ code: 0 });
    expect(offline.stdout.trim().split('\n').at(-1)).toBe('2 histories checked, 0 did not replay');

    // The order's workflow changed so that it no longer replays: --json is still JSON, and nothing else.
    writeFileSync(
      path.join(app.folder, 'dist', 'workflows-changed.js'),
      `export { agentTurn, agentConversation } from 'turnpike/workflows';\nimport { sleep } from '@temporalio/workflow';\nexport async function refundOrder() { await sleep(1000); }\n`,
    );
    const changed = await app.outcome('npx', ['turnpike', 'replay', '--workflows', 'dist/workflows-changed.js', '--from', saved, '--json'], 240_000, temporal);
    expect(changed.code, changed.stderr).toBe(1);
    const report = JSON.parse(changed.stdout) as { checked: unknown[]; failures: Array<{ workflowId: string; eventId?: number; reason: string }> };
    expect(report.checked).toHaveLength(2);
    expect(report.failures).toEqual([expect.objectContaining({ workflowId: expect.stringMatching(/^order-1001-refund-\d+$/), reason: expect.stringContaining('Nondeterminism') })]);
    const plain = await app.outcome('npx', ['turnpike', 'replay', '--workflows', 'dist/workflows-changed.js', '--from', saved], 240_000, temporal);
    expect(plain.code).toBe(1);
    expect(plain.stdout.trim().split('\n').filter((line) => !/^(ok|FAIL) {2,4}\S/.test(line) && !/^2 histories checked, 1 did not replay$/.test(line))).toEqual([]);
    expect(plain.stdout).not.toContain('\u001b[');
    expect(plain.stdout).not.toMatch(/WARN|INFO/);

    // A file of the set that is not a history is named, with what is wrong with it.
    const bad = path.join(app.folder, 'replay', 'bad');
    cpSync(saved, bad, { recursive: true });
    writeFileSync(path.join(bad, '0003-corrupt.json'), '{"events": [{"eventId": "1",}]}');
    const corrupt = await replay(['--from', bad]);
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toContain(`turnpike: error: ${path.join(bad, '0003-corrupt.json')} is not a history to replay: it is not JSON (Expected double-quoted property name`);
    rmSync(path.join(bad, '0003-corrupt.json'));
    writeFileSync(path.join(bad, '0003-not-a-history.json'), JSON.stringify({ workflowId: 'order-1', status: 'completed' }));
    const notHistory = await replay(['--from', bad]);
    expect(notHistory.code).toBe(1);
    expect(notHistory.stderr).toContain(`turnpike: error: ${path.join(bad, '0003-not-a-history.json')} is not a history to replay: it has no "events" array`);
  });
});

/** turnpike's optional peers that an app with one provider (openai), no HTTP API and the default content store does not install. */
const NOT_INSTALLED = ['@anthropic-ai/sdk', '@modelcontextprotocol/sdk', 'fastify', 'fastify-type-provider-zod', 'jose', '@fastify/secure-session', 'openid-client', 'sodium-native', 'pg', '@aws-sdk/client-s3'];

/** The app: a client tool used with the typed submitToolResult, an agent tool, a typed output and a budget (agents.ts), and a script that runs turns on the test server. */
const LEAN_APP_FILES: Record<string, string> = {
  'tsconfig.json': STRICT_APP_TSCONFIG,
  'src/turns.ts': APP_TURNS_FILE,
  // The libraries were checked with the app: here only the wrong uses are of interest.
  'tsconfig.type-errors.json': JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true, rootDir: '.', skipLibCheck: true }, include: ['type-errors'] }),
  'src/tools.ts': `
import type { ModelSettings } from 'turnpike';
import { defineClientTool } from 'turnpike';
import type { TurnpikeClient } from 'turnpike/client';
import { z } from 'zod';

export const askUser = defineClientTool({
  name: 'ask_user',
  description: 'Ask the user a yes/no question',
  inputSchema: z.object({ question: z.string() }),
  outputSchema: z.object({ answer: z.enum(['yes', 'no']) }),
});

export const model: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256, reasoningEffort: 'low' };

export async function answer(turnpike: TurnpikeClient, turnId: string, toolCallId: string): Promise<void> {
  await turnpike.submitToolResult(turnId, { toolCallId, output: { answer: 'yes' } }, askUser);
}
`,
  'src/agents.ts': `
import { defineAgentTool, defineTool, type ModelSettings } from 'turnpike';
import type { TurnpikeClient } from 'turnpike/client';
import { z } from 'zod';

const demo: ModelSettings = { provider: 'scripted', model: 'demo' };

/** Every order this process shipped. */
export const shipped: string[] = [];

export const shipOrder = defineTool({
  name: 'ship_order',
  description: 'Ship an order; a person approves each shipment.',
  inputSchema: z.object({ orderId: z.string() }),
  approval: true,
  execute: async ({ orderId }) => {
    shipped.push(orderId);
    return { shipped: orderId };
  },
});

export const noteDown = defineTool({
  name: 'note_down',
  description: 'Note a line down.',
  inputSchema: z.object({ line: z.string() }),
  execute: async ({ line }) => ({ noted: line }),
});

/** A sub-agent offered as one tool: its own approvals park in its own turn. */
export const shippingAgent = defineAgentTool({
  name: 'shipping_agent',
  description: 'Ships an order.',
  inputSchema: z.object({ orderId: z.string() }),
  agent: { model: demo, tools: [shipOrder.name] },
  prompt: ({ orderId }) => 'use ship_order with ' + JSON.stringify({ orderId }),
});

export const agentTools = [shipOrder, noteDown, shippingAgent];

export const Trip = z.object({ city: z.string(), days: z.number().int() });
export type Trip = z.infer<typeof Trip>;

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('gave up waiting');
}

/** The parent calls the shipping agent; the shipment parks in the child turn, listed with its parent, and is approved there. */
export async function agentTool(turnpike: TurnpikeClient, turnId: string) {
  const content = 'use shipping_agent with {"orderId":"1001"}';
  const handle = await turnpike.startTurn({ model: demo, messages: [{ role: 'user', content }], tools: [shippingAgent.name] }, { turnId });
  const parked = await until(async () => (await turnpike.listParkedCalls()).find((call) => call.parentTurnId === turnId));
  await turnpike.approveToolCall(parked.turnWorkflowId, { approvalId: parked.approvalId!, approved: true, approver: 'lead' });
  const { status, text, toolCalls } = await handle.result();
  const { kind, toolName, input, parentTurnId, turnWorkflowId } = parked;
  return { parked: { kind, toolName, input, parentTurnId, turnWorkflowId }, status, text, answer: toolCalls[0]?.output, shipped };
}

/** A typed answer: the output is read as a Trip, or this does not compile. */
export async function typedAnswer(turnpike: TurnpikeClient, turnId: string) {
  const content = 'answer with {"city":"Lisbon","days":3}';
  await turnpike.startTurn({ model: demo, messages: [{ role: 'user', content }], output: { schema: Trip } }, { turnId });
  const trip: Trip = await turnpike.turnOutput(turnId, Trip);
  return { city: trip.city.toUpperCase(), nights: trip.days - 1 };
}

/** One tool call allowed: the second parks a budget approval, and extending the budget lets the turn finish. */
export async function budget(turnpike: TurnpikeClient, turnId: string) {
  const content = 'use note_down with {"line":"one"} then use note_down with {"line":"two"}';
  const handle = await turnpike.startTurn({ model: demo, messages: [{ role: 'user', content }], tools: [noteDown.name], budget: { toolCalls: 1 } }, { turnId });
  const parked = await until(async () => (await turnpike.turnState(turnId)).pending.find((call) => call.kind === 'budget'));
  await turnpike.extendBudget(turnId, parked.approvalId!, { toolCalls: 1 }, { approver: 'lead' });
  const { status, spend, budget } = await handle.result();
  return { parked: { kind: parked.kind, input: parked.input }, status, toolCalls: spend?.toolCalls, budget };
}
`,
  'src/run.ts': `
import { createHash, randomBytes } from 'node:crypto';
import { TurnpikeClient } from 'turnpike/client';
import { bundleWorkflows, createWorker, FileContentStore, TurnpikePlugin } from 'turnpike/worker';
import { agentTool, agentTools, budget, typedAnswer } from './agents.js';
import { askUser } from './tools.js';
import { main, outcomeOf } from './turns.js';

/** A turn whose 300 KB document goes by reference: where it was stored, and how the turn ended. */
async function storedDocument(turnpike: TurnpikeClient, store: FileContentStore, turnId: string) {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\\n'), randomBytes(300 * 1024)]);
  const content = [{ type: 'text' as const, text: 'Read this.' }, { type: 'document' as const, source: { type: 'base64' as const, mediaType: 'application/pdf', data: pdf.toString('base64') } }];
  const handle = await turnpike.startTurn({ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content }] }, { turnId });
  const status = (await handle.result()).status;
  const key = createHash('sha256').update(pdf).digest('hex');
  return { status, stored: (await store.get(key))?.length === pdf.length };
}

/** Three turns started as a batch, the middle one refused (its tenant is over 64 bytes): how each ended, or why it did not start. */
async function batchOfTurns(turnpike: TurnpikeClient, prefix: string) {
  const input = { model: { provider: 'scripted' as const, model: 'demo' }, messages: [{ role: 'user' as const, content: 'Say hello.' }] };
  const turns = [0, 1, 2].map((index) => ({ input, options: { turnId: \`\${prefix}-\${index}\`, priority: 'batch' as const, ...(index === 1 ? { tenant: 'x'.repeat(65) } : {}) } }));
  const starts = await turnpike.startTurns(turns, { concurrency: 2 });
  return Promise.all(starts.map(async (start) => (start.handle ? (await start.handle.result()).status : start.error.message)));
}

const contentStore = new FileContentStore(process.env.LEAN_CONTENT_FOLDER!);

main(new TurnpikePlugin({ contentStore }), async ({ namespace, client, workerConnection }) => {
  const taskQueue = process.env.LEAN_TASK_QUEUE!;
  const workflowBundle = await bundleWorkflows();
  const worker = await createWorker({ tools: [askUser, ...agentTools], connection: workerConnection, namespace, taskQueue, workflowBundle, contentStore });
  const mcpWorker = await createWorker({
    tools: [],
    connection: workerConnection,
    namespace,
    taskQueue: taskQueue + '-mcp',
    workflowBundle,
    mcpServers: { files: { command: 'npx', args: ['mcp-server-filesystem', '.'] } },
  });
  const turnpike = new TurnpikeClient({ client, taskQueue, contentStore });
  const mcpTurnpike = new TurnpikeClient({ client, taskQueue: taskQueue + '-mcp' });
  return worker.runUntil(() =>
    mcpWorker.runUntil(async () => ({
      anthropic: await outcomeOf(turnpike, taskQueue + '-anthropic', { provider: 'anthropic', model: 'claude-sonnet-4-6' }),
      openai: await outcomeOf(turnpike, taskQueue + '-openai', { provider: 'openai', model: 'gpt-4.1-mini' }),
      mcp: await outcomeOf(mcpTurnpike, taskQueue + '-mcp-turn', { provider: 'scripted', model: 'demo' }),
      content: await storedDocument(turnpike, contentStore, taskQueue + '-content'),
      agentTool: await agentTool(turnpike, taskQueue + '-agent-tool'),
      typedAnswer: await typedAnswer(turnpike, taskQueue + '-typed'),
      budget: await budget(turnpike, taskQueue + '-budget'),
      batch: await batchOfTurns(turnpike, taskQueue + '-batch'),
    })),
  );
});
`,
  'type-errors/wrong-output.ts': `
import type { TurnpikeClient } from 'turnpike/client';
import { askUser } from '../src/tools.js';

export async function answerMaybe(turnpike: TurnpikeClient, turnId: string, toolCallId: string): Promise<void> {
  await turnpike.submitToolResult(turnId, { toolCallId, output: { answer: 'maybe' } }, askUser);
}
`,
  'type-errors/wrong-typed-output.ts': `
import type { TurnpikeClient } from 'turnpike/client';
import { Trip } from '../src/agents.js';

export async function nightsOf(turnpike: TurnpikeClient, turnId: string): Promise<number> {
  const trip = await turnpike.turnOutput(turnId, Trip);
  return trip.nights;
}
`,
  'type-errors/misspelt-option.ts': `
import type { ModelSettings } from 'turnpike';

export const model: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini', maxToken: 256 };
`,
};

describe('the packed package in a fresh app with one provider and no HTTP API', { timeout: 300_000 }, () => {
  let app: PackedApp;

  beforeAll(async () => {
    app = await installApp(directory, 'lean-app', tarball, LEAN_APP_FILES, ['openai']);
  }, 480_000);

  it('installs the one provider SDK it asked for, and not the other, the MCP SDK or the HTTP API\'s packages', async () => {
    const { stdout } = await app.run('npm', ['ls', '--all', '--parseable']);
    const installed = stdout.split('\n').filter(Boolean);
    const anywhere = (name: string) => installed.filter((location) => location.endsWith(`/node_modules/${name}`));
    expect(anywhere('turnpike')).toHaveLength(1);
    expect(anywhere('openai')).toHaveLength(1);
    expect(Object.fromEntries(NOT_INSTALLED.map((name) => [name, anywhere(name)]))).toEqual(Object.fromEntries(NOT_INSTALLED.map((name) => [name, []])));
    for (const name of NOT_INSTALLED) expect(existsSync(path.join(app.folder, 'node_modules', name))).toBe(false);
  });

  it('type-checks with library checks on, and a wrong client-tool output, a misspelt model option and a wrong use of a typed output do not compile', async () => {
    await app.run('npx', ['tsc', '-p', '.', '--noEmit']);
    const compiled = await app.outcome('npx', ['tsc', '-p', 'tsconfig.type-errors.json']);
    const failed = compiled.code === 0 ? undefined : compiled.stdout;
    expect(failed, 'tsc accepted the wrong uses').toBeDefined();
    const errors = failed!.split('\n').flatMap((line) => {
      const found = /^([^(\s]+)\(\d+,\d+\): error (TS\d+): (.*)$/.exec(line);
      return found ? [{ file: found[1], code: found[2], message: found[3] }] : [];
    });
    expect(errors.map(({ file, code }) => `${file} ${code}`).sort()).toEqual([
      'type-errors/misspelt-option.ts TS2561',
      'type-errors/wrong-output.ts TS2345',
      'type-errors/wrong-typed-output.ts TS2339',
    ]);
    expect(errors.find(({ file }) => file.includes('misspelt'))!.message).toBe(
      "Object literal may only specify known properties, but 'maxToken' does not exist in type 'ModelSettings'. Did you mean to write 'maxTokens'?",
    );
    expect(errors.find(({ file }) => file.includes('wrong-output'))!.message).toContain("is not assignable to parameter of type 'ClientToolResult<");
    // The union's order is the compiler's.
    expect(failed).toMatch(/Type '"maybe"' is not assignable to type '("yes" \| "no"|"no" \| "yes")'\./);
    // turnOutput is typed from the schema it is given.
    expect(errors.find(({ file }) => file.includes('wrong-typed-output'))!.message).toBe("Property 'nights' does not exist on type '{ city: string; days: number; }'.");
  });

  it('loads turnpike, turnpike/worker, turnpike/client and turnpike/workflows; turnpike/api and codec-server name what is missing', async () => {
    const { stdout } = await app.run('node', [
      '--input-type=module',
      '-e',
      `for (const entry of ['turnpike', 'turnpike/worker', 'turnpike/client', 'turnpike/workflows']) await import(entry);
       console.log(await import('turnpike/api').then(() => 'loaded', (error) => error.message));`,
    ]);
    expect(stdout).toMatch(/^Cannot find package 'fastify' imported from .*node_modules\/turnpike\/dist\/api\//);
    // The CLI runs without the HTTP API's packages; only its codec server needs them.
    expect((await app.run('npx', ['turnpike', '--help'])).stdout).toContain('codec-server');
    const codecServer = await app.outcome('npx', ['turnpike', 'codec-server'], 60_000);
    expect(codecServer.code).toBe(1);
    expect(codecServer.stderr).toMatch(/turnpike codec-server needs (fastify|jose), which is not installed: npm install fastify@\^5\.12\.8 jose@\^6\.2\.17/);
  });

  it('runs turns: the missing provider SDK and MCP SDK fail them naming the package; the installed provider is loaded; a large document goes through the app\'s content store; an agent tool, a typed output, a budget and a batch of turns work', async () => {
    await app.run('npx', ['tsc', '-p', '.', '--skipLibCheck']);
    const taskQueue = `lean-app-${randomUUID()}`;
    const result = (await app.runScript({
      LEAN_TASK_QUEUE: taskQueue,
      LEAN_CONTENT_FOLDER: path.join(app.folder, 'content'),
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
    })) as Record<'anthropic' | 'openai' | 'mcp', Array<{ type?: string; message: string }>> &
      Record<'content' | 'agentTool' | 'typedAnswer' | 'budget' | 'batch', unknown>;
    // A document of 300 KB went through the app's own content store, and the turn read it back.
    expect(result.content).toEqual({ status: 'completed', stored: true });
    expect(result.batch).toEqual(['completed', expect.stringMatching(/^Invalid startTurn: tenant is 65 bytes long/), 'completed']);
    expect(result.anthropic).toContainEqual({
      type: 'MissingPackage',
      message: 'The model provider "anthropic" needs @anthropic-ai/sdk, which is not installed: npm install @anthropic-ai/sdk@^1.12.0',
    });
    expect(result.mcp).toContainEqual({
      type: 'MissingPackage',
      message: 'A worker with mcpServers needs @modelcontextprotocol/sdk, which is not installed: npm install @modelcontextprotocol/sdk@^1.32.2',
    });
    // openai is installed: its provider loads and asks for the key it was not given.
    expect(result.openai).toContainEqual({ type: 'ProviderAuthenticationError', message: "openai: no API key — set OPENAI_API_KEY in the worker's environment" });
    // The sub-agent's approval parked in its child turn, listed with the parent; once approved, the child and then the parent completed.
    const child = `${taskQueue}-agent-tool/call_1_1`;
    const childAnswer = 'Done. ship_order: {"shipped":"1001"}';
    expect(result.agentTool).toEqual({
      parked: { kind: 'approval', toolName: 'ship_order', input: { orderId: '1001' }, parentTurnId: `${taskQueue}-agent-tool`, turnWorkflowId: child },
      status: 'completed',
      text: `Done. shipping_agent: ${childAnswer}`,
      answer: childAnswer,
      shipped: ['1001'],
    });
    expect(result.typedAnswer).toEqual({ city: 'LISBON', nights: 2 });
    // The second call would go over one tool call: a budget approval, extended by one, and the turn finished.
    expect(result.budget).toEqual({
      parked: { kind: 'budget', input: expect.objectContaining({ exceeded: ['toolCalls'], budget: { toolCalls: 1 }, extendBy: { toolCalls: 1 } }) },
      status: 'completed',
      toolCalls: 2,
      budget: { toolCalls: 2 },
    });
  });
});

describe('the packed package in a fresh app with @ai-sdk/google only', { timeout: 300_000 }, () => {
  const GEMINI_KEY = 'gemini-packed-SECRET-7f3a';
  let app: PackedApp;
  let gemini: FakeGemini;

  beforeAll(async () => {
    gemini = await startFakeGemini(GEMINI_KEY);
    app = await installApp(directory, 'gemini-app', tarball, GEMINI_APP_FILES, ['@ai-sdk/google']);
  }, 480_000);

  afterAll(async () => {
    await gemini?.close();
  });

  it('installs neither openai nor @anthropic-ai/sdk, type-checks with library checks on, and runs a Gemini turn through an approval', async () => {
    const { stdout: tree } = await app.run('npm', ['ls', '--all', '--parseable']);
    const installed = tree.split('\n').filter(Boolean);
    for (const name of ['openai', '@anthropic-ai/sdk', '@ai-sdk/google']) {
      expect([name, installed.filter((location) => location.endsWith(`/node_modules/${name}`)).length]).toEqual([name, name === '@ai-sdk/google' ? 1 : 0]);
    }
    // One compile, with library checks on: the only errors are the AI SDK's own typings' (they
    // name HeadersInit, a DOM type, and the app's lib is ES2023), none in the app or turnpike's.
    const { stdout: checked } = await app.outcome('npx', ['tsc', '-p', '.']);
    expect(checked.split('\n').filter((line) => /error TS/.test(line) && !line.startsWith('node_modules/@ai-sdk/'))).toEqual([]);
    expect(existsSync(path.join(app.folder, 'dist', 'run.js'))).toBe(true);

    gemini.script([
      { thinking: 'Restarting billing needs a person.', text: 'Asking first.', toolCalls: [{ name: 'restart_service', args: { service: 'billing' } }] },
      { thinking: 'It ran.', text: 'billing is restarted.' },
    ]);
    const taskQueue = `gemini-app-${randomUUID()}`;
    const result = await app.runScript({ GEMINI_TASK_QUEUE: taskQueue, GEMINI_BASE_URL: gemini.baseURL, GEMINI_API_KEY: GEMINI_KEY });
    expect(result).toEqual({
      parked: { kind: 'approval', toolName: 'restart_service', input: { service: 'billing' } },
      restartedWhileParked: [],
      status: 'completed',
      steps: 2,
      text: 'billing is restarted.',
      toolCalls: [{ toolName: 'restart_service', outcome: 'approved', output: { restarted: 'billing' } }],
      restarted: ['billing'],
    });
    // Both steps went to the strict fake, streamed, and it accepted them: the call's thought
    // signature came back unchanged after the park, with its function response.
    expect(gemini.requests.map((request) => [request.model, request.stream, request.status, request.errors])).toEqual([
      ['gemini-2.5-flash', true, 200, []],
      ['gemini-2.5-flash', true, 200, []],
    ]);
    const signedCall = gemini.requests[0].reply!.flatMap((chunk) => chunk.candidates[0].content.parts).find((part) => part.functionCall);
    expect(gemini.requests[1].body.contents[1].parts).toContainEqual({ functionCall: expect.objectContaining({ name: 'restart_service' }), thoughtSignature: signedCall.thoughtSignature });
  });
});
