/**
 * The HTTP API over a test's turnpike harness, listening on a free port of 127.0.0.1, with the
 * bearer token `alice-token` for `alice` unless the test gives its own options.
 */
import type { FastifyInstance } from 'fastify';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnpikeHarness } from './turnpike-harness.js';

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
