/**
 * The setup of the files that run their own worker processes against the fake providers: the fakes
 * installed (`useFakeProviders`) and a Temporal client of the dev server (the connection's
 * retries as turnpike's own, turnpike's data converter), both ready in `beforeAll`; the histories
 * the file started saved, the connection closed and the fakes restored in `afterAll`.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, inject } from 'vitest';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { useFakeProviders } from './fake-providers.js';
import { saveStarted } from './history-recorder.js';

export interface ClientWithFakes {
  fake: Awaited<ReturnType<typeof useFakeProviders>>;
  client: Client;
}

/** Registers the file's `beforeAll`/`afterAll`; the fields are set once `beforeAll` has run. */
export function useClientWithFakes(): ClientWithFakes {
  const suite = {} as ClientWithFakes;
  let connection: Connection | undefined;
  beforeAll(async () => {
    suite.fake = await useFakeProviders();
    connection = await Connection.connect({ address: inject('temporalAddress'), interceptors: [turnpikeGrpcRetryInterceptor()] });
    suite.client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
  });
  afterAll(async () => {
    await saveStarted();
    await connection?.close();
    await suite.fake?.restore();
  });
  return suite;
}
