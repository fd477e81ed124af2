/**
 * The receive limit of turnpike's connections to Temporal (connection/temporal-connection.ts), and
 * that every connection turnpike's code opens gets it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import {
  GRPC_DEFAULT_RECEIVE_LIMIT_BYTES,
  RECEIVE_LIMIT_ARG,
  receiveLimitOf,
  TEMPORAL_RECEIVE_LIMIT_BYTES,
  temporalConnectionOptions,
} from '../../connection/temporal-connection.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where turnpike's code opens connections: the package, its scripts, the benchmark and the example. */
const FOLDERS = ['api', 'cli', 'client', 'content', 'worker', 'activities', 'scripts', 'bench', 'examples/order-desk/src', 'demo'];

function sources(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.includes('node_modules'))
    .map((file) => path.join(folder, file));
}

describe('turnpike\'s connections to Temporal', () => {
  it('take 128 MiB answers, as the Go SDK and the Temporal CLI do, unless the options set a limit', () => {
    const { interceptors, ...rest } = temporalConnectionOptions({ address: 'temporal:7233' });
    expect(rest).toEqual({ address: 'temporal:7233', channelArgs: { [RECEIVE_LIMIT_ARG]: 128 * 1024 * 1024 } });
    expect(interceptors).toHaveLength(1);
    expect(temporalConnectionOptions({ channelArgs: { 'grpc.keepalive_time_ms': 1_000 } }).channelArgs).toEqual({ 'grpc.keepalive_time_ms': 1_000, [RECEIVE_LIMIT_ARG]: TEMPORAL_RECEIVE_LIMIT_BYTES });
    expect(temporalConnectionOptions({ channelArgs: { [RECEIVE_LIMIT_ARG]: 1_000 } }).channelArgs).toEqual({ [RECEIVE_LIMIT_ARG]: 1_000 });
  });

  it('read the limit a Connection was given; the SDK\'s own default sets none that grpc-js reads', () => {
    expect(receiveLimitOf(Connection.lazy(temporalConnectionOptions({ address: '127.0.0.1:1' })))).toBe(TEMPORAL_RECEIVE_LIMIT_BYTES);
    expect(receiveLimitOf(Connection.lazy({ address: '127.0.0.1:1', channelArgs: { [RECEIVE_LIMIT_ARG]: -1 } }))).toBe(Infinity);
    const plain = Connection.lazy({ address: '127.0.0.1:1' });
    expect(plain.options.channelArgs).toHaveProperty('max_receive_message_length');
    expect(receiveLimitOf(plain)).toBe(GRPC_DEFAULT_RECEIVE_LIMIT_BYTES);
    expect(receiveLimitOf({})).toBeUndefined();
  });

  it('are all opened through connectTemporal', () => {
    const direct = FOLDERS.flatMap(sources)
      .filter((file) => file !== path.join('connection', 'temporal-connection.ts'))
      .filter((file) => /(?<!Native)Connection\.(connect|lazy)\(/.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(direct).toEqual([]);
  });
});
