/**
 * A start with a tenant in a namespace that lacks the `TurnpikeTenant` search attribute (every
 * other turnpike attribute registered, so its turns run): `startTurn` and `sendMessage` are
 * refused with the command that registers it, and nothing is started; without a tenant a turn
 * starts and runs as before. The namespace is made for this file through the dev server's
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
import { testTools } from '../support/test-tools.js';
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

describe('a tenant without the TurnpikeTenant search attribute', () => {
  it('is refused with the command that registers it, and starts nothing', async () => {
    const { turnpike } = suite;
    const namespace = `no-tenant-${randomUUID().slice(0, 8)}`;
    const { workflowService, operatorService } = turnpike.client.connection;
    await workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const searchAttributes = Object.fromEntries(Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([name]) => name !== 'TurnpikeTenant').map(([name, type]) => [name, TYPES[type]]));
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
    expect(Object.keys(listed.customAttributes ?? {})).not.toContain('TurnpikeTenant');

    const taskQueue = `no-tenant-${randomUUID()}`;
    native = await NativeConnection.connect({ address: inject('temporalAddress') });
    worker = await createWorker({ tools: testTools, taskQueue, connection: native, namespace, workflowBundle: { codePath: inject('workflowBundlePath') } });
    running = worker.run();
    const client = new TurnpikeClient({ client: new Client({ connection: turnpike.client.connection, namespace, dataConverter: turnpikeDataConverter }), taskQueue });

    const turnId = `no-tenant-${randomUUID()}`;
    const input = { model: { provider: 'scripted' as const, model: 'demo' }, messages: [{ role: 'user' as const, content: 'look up order 1001' }] };
    const error = await client.startTurn(input, { turnId, tenant: 'acme' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((error as Error).message).toContain('temporal operator search-attribute create --name TurnpikeTenant --type Keyword');
    expect(await client.turn(turnId).describe().then(() => 'started', () => 'not started')).toBe('not started');

    const conversationId = `no-tenant-conversation-${randomUUID()}`;
    const refused = await client.sendMessage({ conversationId, conversation: { model: input.model }, text: 'hello', tenant: 'acme' }).catch((caught: unknown) => caught);
    expect((refused as Error).message).toContain('--name TurnpikeTenant --type Keyword');
    expect(await client.conversation(conversationId).describe().then(() => 'started', () => 'not started')).toBe('not started');

    // Without a tenant the namespace runs turns as before.
    await client.startTurn(input, { turnId });
    expect((await client.turnResult(turnId)).status).toBe('completed');
  });
});
