/**
 * A namespace of its own that lacks one turnpike search attribute (every other one registered, so
 * its turns run), with a worker on a task queue of its own and a `TurnpikeClient` on it: for the
 * tests of a start refused with the command that registers the missing attribute. Made through
 * the dev server's workflow and operator services; the worker stops after the file.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, expect, inject } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { createWorker } from '../../worker/create-worker.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../../workflows/context/search-attributes.js';
import { testTools } from './test-tools.js';

const { IndexedValueType } = temporal.api.enums.v1;
const TYPES = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

/** Call at the top of a test file; the returned function makes the namespace, its worker and its client. */
export function useNamespaceWithout(attribute: keyof typeof SEARCH_ATTRIBUTE_TYPES, prefix: string): (connection: Client['connection']) => Promise<TurnpikeClient> {
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let native: NativeConnection | undefined;
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await native?.close();
  });
  return async (connection) => {
    const namespace = `${prefix}-${randomUUID().slice(0, 8)}`;
    const { workflowService, operatorService } = connection;
    await workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const searchAttributes = Object.fromEntries(Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([name]) => name !== attribute).map(([name, type]) => [name, TYPES[type]]));
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
    expect(Object.keys(listed.customAttributes ?? {})).not.toContain(attribute);

    const taskQueue = `${prefix}-${randomUUID()}`;
    native = await NativeConnection.connect({ address: inject('temporalAddress') });
    worker = await createWorker({ tools: testTools, taskQueue, connection: native, namespace, workflowBundle: { codePath: inject('workflowBundlePath') } });
    running = worker.run();
    return new TurnpikeClient({ client: new Client({ connection, namespace, dataConverter: turnpikeDataConverter }), taskQueue });
  };
}
