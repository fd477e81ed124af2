/**
 * The HTTP API over a test's turnpike harness, listening on a free port of 127.0.0.1, with the
 * bearer token `alice-token` for `alice` unless the test gives its own options.
 */
import type { FastifyInstance } from 'fastify';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { afterAll, beforeAll } from 'vitest';
import { useTurnpikeWithFakes, type TurnpikeHarness, type TurnpikeSuite } from './turnpike-harness.js';

export interface ServedApi {
  /** The client the API uses, over the harness's Temporal client and task queue. */
  client: TurnpikeClient;
  api: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  base: string;
}

export async function serveApi(turnpike: TurnpikeHarness, options: Partial<Parameters<typeof buildApi>[0]> = {}): Promise<ServedApi> {
  const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  const api = await buildApi({ client, tokens: parseTokenMap('alice-token:alice'), ...options });
  return { client, api, base: await api.listen({ host: '127.0.0.1', port: 0 }) };
}

/** What `useTurnpikeApiWithFakes` sets up: `useTurnpikeWithFakes`'s suite, with the API over it. */
export interface TurnpikeApiSuite extends TurnpikeSuite, ServedApi {}

/**
 * The setup of the files that drive turns through the HTTP API (`/api/chat` and the rest):
 * `useTurnpikeWithFakes(options)`, and the API (`apiOptions`) served over its harness for the
 * file, closed before the worker stops; `client` is the API's.
 */
export function useTurnpikeApiWithFakes(options: Parameters<typeof useTurnpikeWithFakes>[0], apiOptions: Partial<Parameters<typeof buildApi>[0]> = {}): TurnpikeApiSuite {
  const suite = useTurnpikeWithFakes(options) as TurnpikeApiSuite;
  beforeAll(async () => {
    Object.assign(suite, await serveApi(suite.turnpike, apiOptions));
  });
  afterAll(async () => {
    await suite.api?.close();
  });
  return suite;
}
