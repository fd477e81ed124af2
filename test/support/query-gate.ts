/**
 * A Client beside `source` (same connection, namespace and converter) whose workflow queries wait
 * until `open()`: the live tests hold a reader's durable reads with it, to show what reaches the
 * reader through the live channel alone. `holds` picks the queries held (all by default).
 */
import { Client } from '@temporalio/client';

export interface QueryGate {
  /** True until `open()`. */
  closed: boolean;
  open: () => void;
  client: Client;
}

export function queryGate(source: Client, holds: (workflowId: string) => boolean = () => true): QueryGate {
  let resolve!: () => void;
  const gate = new Promise<void>((done) => (resolve = done));
  const client = new Client({
    connection: source.connection,
    namespace: source.options.namespace,
    dataConverter: source.options.dataConverter,
    interceptors: { workflow: [{ query: async (input, next) => (holds(input.workflowExecution.workflowId) && (await gate), next(input)) }] },
  });
  const state: QueryGate = {
    closed: true,
    client,
    open: () => {
      state.closed = false;
      resolve();
    },
  };
  return state;
}
