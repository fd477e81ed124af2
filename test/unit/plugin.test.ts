/** TurnpikePlugin's configuration of a user's Client, Worker options and workflow bundle. */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { CompressionCodec } from '../../client/index.js';
import { bundleWorkflowCode } from '@temporalio/worker';
import { TurnpikePlugin, WORKFLOWS_PATH, WORKFLOW_PRELOAD_PATH } from '../../worker/index.js';
import { createWorkflowInstance, reusableWorkflowContext } from '../../bench/workflow-instance-heap.js';

class UserCodec implements PayloadCodec {
  async encode(payloads: Payload[]) {
    return payloads;
  }
  async decode(payloads: Payload[]) {
    return payloads;
  }
}

describe('TurnpikePlugin', () => {
  it('compresses before the user\'s own codecs (e.g. encryption), stores large payloads after them, and keeps the rest of their converter', () => {
    const mine = new UserCodec();
    const { dataConverter } = new TurnpikePlugin().configureClient({ dataConverter: { payloadCodecs: [mine], payloadConverterPath: '/app/converter.js' } });
    expect(dataConverter?.payloadCodecs?.map((codec) => codec.constructor.name)).toEqual(['CompressionCodec', 'UserCodec', 'ClaimCheckCodec']);
    expect(dataConverter?.payloadCodecs?.[1]).toBe(mine);
    expect(dataConverter?.payloadConverterPath).toBe('/app/converter.js');
  });

  it('adds its codecs once, however often it is applied, and no compression when compression is off', () => {
    const plugin = new TurnpikePlugin();
    const twice = plugin.configureClient(plugin.configureClient({}));
    expect(twice.dataConverter?.payloadCodecs?.map((codec) => codec.constructor.name)).toEqual(['CompressionCodec', 'ClaimCheckCodec']);
    expect(twice.dataConverter?.payloadCodecs?.[0]).toBeInstanceOf(CompressionCodec);
    const uncompressed = new TurnpikePlugin({ compressPayloads: false }).configureClient({}).dataConverter;
    expect(uncompressed?.payloadCodecs?.map((codec) => codec.constructor.name)).toEqual(['ClaimCheckCodec']);
  });

  it('preloads turnpike\'s shared modules in the user\'s workflow bundle, next to the user\'s own', () => {
    const options = new TurnpikePlugin().configureBundler({ workflowsPath: '/app/workflows.js', preloadModules: ['/app/preload.js', WORKFLOW_PRELOAD_PATH] });
    expect(options.preloadModules).toEqual(['/app/preload.js', WORKFLOW_PRELOAD_PATH]);
    expect(new TurnpikePlugin().configureBundler({ workflowsPath: '/app/workflows.js' }).preloadModules).toEqual([WORKFLOW_PRELOAD_PATH]);
  });

  it('has every workflow share turnpike\'s workflow modules: a new workflow evaluates none of its own', async () => {
    const quiet = { trace() {}, debug() {}, info() {}, log() {}, warn() {}, error() {} };
    // The modules a freshly created turn evaluates for itself (its module cache), in the SDK's
    // reusable V8 context, as a worker with `reuseV8Context` (the default) creates it.
    const ownModules = async (plugins: TurnpikePlugin[]) => {
      const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet, plugins });
      const context = await reusableWorkflowContext(code);
      const turns: Awaited<ReturnType<typeof createWorkflowInstance>>[] = [];
      try {
        for (const runId of ['r1', 'r2']) turns.push(await createWorkflowInstance(context, runId, 'agentTurn'));
        // Each turn still has its own runtime (activator), whatever the modules it shares.
        const [first, second] = turns.map((turn) => (turn as unknown as { activator: { moduleCache: Map<string, unknown> } }).activator);
        expect(first).not.toBe(second);
        return [...second!.moduleCache.keys()].filter((id) => id.startsWith('./'));
      } finally {
        for (const turn of turns) await turn.dispose();
        await context.destroy();
      }
    };
    expect(await ownModules([new TurnpikePlugin()])).toEqual([]);
    // Without the plugin's preload, each turn evaluates turnpike's modules (and
    // @opentelemetry/api's, before park-telemetry stopped importing it) again.
    expect(await ownModules([])).toEqual(expect.arrayContaining(['./workflows/turn/agent-turn.ts', './workflows/context/transcript.ts']));
  }, 120_000);

  it('leaves the source text out of the bundle\'s source map unless asked, and keeps the mappings to the original files', async () => {
    const quiet = { trace() {}, debug() {}, info() {}, log() {}, warn() {}, error() {} };
    const sourceMapOf = async (plugin: TurnpikePlugin, webpackConfigHook?: (config: object) => object) => {
      const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet, plugins: [plugin], ...(webpackConfigHook ? { webpackConfigHook } : {}) });
      const base64 = code.slice(code.lastIndexOf('base64,') + 'base64,'.length).trim();
      return { bytes: code.length, map: JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as { sources: string[]; sourcesContent?: string[] } };
    };
    const lean = await sourceMapOf(new TurnpikePlugin());
    expect(lean.map.sourcesContent).toBeUndefined();
    expect(lean.map.sources.some((source) => source.endsWith('workflows/turn/agent-turn.ts'))).toBe(true);
    const full = await sourceMapOf(new TurnpikePlugin({ bundleSourceContent: true }));
    expect(full.map.sourcesContent?.length).toBe(full.map.sources.length);
    expect(lean.bytes).toBeLessThan(full.bytes * 0.7);
    // A devtool other than the SDK's, set through the user's own hook, is theirs.
    const own = await sourceMapOf(new TurnpikePlugin(), (config) => ({ ...config, devtool: 'inline-cheap-module-source-map' }));
    expect(own.map.sourcesContent?.length).toBe(own.map.sources.length);
  }, 120_000);
});
