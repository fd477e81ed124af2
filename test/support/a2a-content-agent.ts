/**
 * One A2A agent on the content-store harness (content-fixtures.ts: a worker and the strict fake
 * providers), served by `buildApi` for alice, with `@a2a-js/sdk`'s client for her. The API's
 * client stores large parts where the worker reads them: the harness's own store.
 */
import type { Client } from '@a2a-js/sdk/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import type { A2aAgent } from '../../api/a2a/a2a-agents.js';
import { buildApi } from '../../api/server.js';
import { a2aClient } from './a2a-client.js';
import { startContentTurnpike, type ContentTurnpike } from './content-fixtures.js';

export interface A2aContentAgent {
  context: ContentTurnpike;
  alice: Client;
}

/** Call at the top of a test file; the returned object is filled before its tests run. */
export function useA2aContentAgent(name: string, agent: A2aAgent): A2aContentAgent {
  const served = {} as A2aContentAgent;
  let api: FastifyInstance | undefined;
  beforeAll(async () => {
    served.context = await startContentTurnpike([]);
    api = await buildApi({ client: served.context.client, tokens: parseTokenMap('alice-token:alice'), a2a: { agents: { [name]: agent } } });
    const base = await api.listen({ host: '127.0.0.1', port: 0 });
    served.alice = await a2aClient(`${base}/api/a2a/${name}/`, 'alice-token');
  });
  afterAll(async () => {
    await api?.close();
    await served.context?.stop();
  });
  return served;
}
