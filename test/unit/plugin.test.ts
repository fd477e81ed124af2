/** TurnpikePlugin's configuration of a user's Client, Worker options and workflow bundle. */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { CompressionCodec } from '../../client/index.js';
import { TurnpikePlugin, WORKFLOW_PRELOAD_PATH } from '../../worker/index.js';

class UserCodec implements PayloadCodec {
  async encode(payloads: Payload[]) {
    return payloads;
  }
  async decode(payloads: Payload[]) {
    return payloads;
  }
}

describe('TurnpikePlugin', () => {
  it('compresses before the user\'s own codecs (e.g. encryption), and keeps the rest of their converter', () => {
    const mine = new UserCodec();
    const { dataConverter } = new TurnpikePlugin().configureClient({ dataConverter: { payloadCodecs: [mine], payloadConverterPath: '/app/converter.js' } });
    expect(dataConverter?.payloadCodecs?.map((codec) => codec.constructor.name)).toEqual(['CompressionCodec', 'UserCodec']);
    expect(dataConverter?.payloadCodecs?.[1]).toBe(mine);
    expect(dataConverter?.payloadConverterPath).toBe('/app/converter.js');
  });

  it('adds the codec once, however often it is applied, and not at all when compression is off', () => {
    const plugin = new TurnpikePlugin();
    const twice = plugin.configureClient(plugin.configureClient({}));
    expect(twice.dataConverter?.payloadCodecs).toHaveLength(1);
    expect(twice.dataConverter?.payloadCodecs?.[0]).toBeInstanceOf(CompressionCodec);
    expect(new TurnpikePlugin({ compressPayloads: false }).configureClient({}).dataConverter).toBeUndefined();
  });

  it('preloads turnpike\'s shared modules in the user\'s workflow bundle, next to the user\'s own', () => {
    const options = new TurnpikePlugin().configureBundler({ workflowsPath: '/app/workflows.js', preloadModules: ['/app/preload.js', WORKFLOW_PRELOAD_PATH] });
    expect(options.preloadModules).toEqual(['/app/preload.js', WORKFLOW_PRELOAD_PATH]);
    expect(new TurnpikePlugin().configureBundler({ workflowsPath: '/app/workflows.js' }).preloadModules).toEqual([WORKFLOW_PRELOAD_PATH]);
  });
});
