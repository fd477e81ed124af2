/**
 * forkTurn in a namespace that lacks the `TurnpikeForkOf` search attribute (every other turnpike
 * attribute registered, so its turns run): the fork is refused with the command that registers
 * it, and nothing is started. The namespace is made for this file through the dev server's
 * workflow and operator services, with a worker of its own.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { createWorker } from '../../worker/create-worker.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../../workflows/context/search-attributes.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });
const { IndexedValueType } = temporal.api.enums.v1;
const TYPES = { Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD, KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST } as const;

let worker: Worker | undefined;
let running: Promise<void> | undefined;
let native: NativeConnection | undefined;
afterAll(async () => {
  worker?.shutdown();
  await running;
  await native?.close();
});

describe('forkTurn without the TurnpikeForkOf search attribute', () => {
  it('is refused with the command that registers it, and starts nothing', async () => {
    const { fake, turnpike } = suite;
    const namespace = `no-fork-of-${randomUUID().slice(0, 8)}`;
    const { workflowService, operatorService } = turnpike.client.connection;
    await workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const searchAttributes = Object.fromEntries(Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([name]) => name !== 'TurnpikeForkOf').map(([name, type]) => [name, TYPES[type]]));
    // A namespace just registered is known to every service a moment later.
    for (let attempt = 0; ; attempt++) {
      try {
        await operatorService.addSearchAttributes({ namespace, searchAttributes });
        break;
      } catch (error) {
        if (attempt >= 60) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    const listed = await operatorService.listSearchAttributes({ namespace });
    expect(Object.keys(listed.customAttributes ?? {})).not.toContain('TurnpikeForkOf');

    const taskQueue = `no-fork-of-${randomUUID()}`;
    native = await NativeConnection.connect({ address: inject('temporalAddress') });
    worker = await createWorker({ tools: testTools, taskQueue, connection: native, namespace, workflowBundle: { codePath: inject('workflowBundlePath') } });
    running = worker.run();
    const client = new TurnpikeClient({ client: new Client({ connection: turnpike.client.connection, namespace, dataConverter: turnpikeDataConverter }), taskQueue });

    const turnId = `no-fork-of-${randomUUID()}`;
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'ns-step-1' } }] }, { text: 'done' }]);
    await client.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'One step.' }] }, { turnId });
    expect((await client.turnResult(turnId)).steps).toBe(2);

    const asked = fake.requests.length;
    const error = await client.forkTurn(turnId, { atStep: 1, turnId: `${turnId}/fork` }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((error as Error).message).toContain('temporal operator search-attribute create --name TurnpikeForkOf --type Keyword');
    expect(await client.turn(`${turnId}/fork`).describe().then(() => 'started', () => 'not started')).toBe('not started');
    expect(fake.requests.length).toBe(asked);
    expect(executionsOf(`${turnId}/fork`)).toEqual([]);
  });
});
