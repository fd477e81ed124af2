/**
 * Hostile payloads, and senders that put them on the wire as they are: raw gRPC
 * (`workflowService.signalWorkflowExecution` / `updateWorkflowExecution`), past any client codec
 * or converter, as a backend in another language (or a hand-written script) would.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';

const { temporal } = proto;
const COMPLETED = temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED;
const bytes = (text: string) => new TextEncoder().encode(text);

export function payload(encoding: string, data?: string | Uint8Array, metadata: Record<string, string> = {}): Payload {
  return {
    metadata: { encoding: bytes(encoding), ...Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, bytes(value)])) },
    ...(data !== undefined ? { data: typeof data === 'string' ? bytes(data) : data } : {}),
  };
}

export const json = (value: unknown): Payload => payload('json/plain', JSON.stringify(value));

/** Text that does not compress (random base64), so it stays megabytes through turnpike's gzip codec. */
export function incompressible(chars: number): string {
  return randomBytes(Math.ceil((chars * 3) / 4)).toString('base64').slice(0, chars);
}

/** An array nested `depth` levels deep, as JSON text (JSON.stringify would overflow the stack). */
export function deepJson(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

let bomb: Uint8Array | undefined;

/** Every kind of payload list that does not decode to a message. */
export const UNDECODABLE: Record<string, () => Payload[]> = {
  'invalid JSON (NaN)': () => [payload('json/plain', '{"approvalId": NaN, "approved": tru')],
  'an unknown encoding': () => [payload('binary/encrypted', randomBytes(64))],
  'binary/gzip that is not gzip': () => [payload('binary/gzip', 'this is not gzip')],
  'binary/gzip of something that is not a payload': () => [payload('binary/gzip', gzipSync(randomBytes(256)))],
  'a gzip bomb (80 MiB of zeros)': () => [payload('binary/gzip', (bomb ??= gzipSync(new Uint8Array(80 * 1024 * 1024))))],
  'protobuf where JSON is expected': () => [payload('json/protobuf', '{"approvalId":"x"}', { messageType: 'turnpike.Decision' })],
  'binary protobuf': () => [payload('binary/protobuf', randomBytes(32), { messageType: 'turnpike.Decision' })],
  'an empty payload list': () => [],
  'a claim check of content no store holds': () => [payload('binary/turnpike-claim', JSON.stringify({ ref: `sha256:${randomBytes(32).toString('hex')}`, bytes: 300_000 }))],
  'a claim check whose data is not a reference': () => [payload('binary/turnpike-claim', '{"ref":"../../etc/passwd","bytes":1}')],
  'a payload without metadata': () => [{ data: bytes('{"approvalId":"x","approved":true}') }],
  'JSON without data': () => [payload('json/plain')],
  'a good first argument and an undecodable second': () => [json({ approvalId: 'apr_x', approved: true }), payload('json/plain', '{NaN')],
};

/** Sends a signal as raw payloads. */
export async function rawSignal(client: Client, workflowId: string, signalName: string, payloads: Payload[]): Promise<void> {
  await client.workflowService.signalWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId },
    signalName,
    input: { payloads },
    identity: 'hostile-fuzz',
    requestId: randomUUID(),
  });
}

/** The outcome of an update sent as raw payloads: accepted (its result) or rejected (the failure's type and message). */
export type RawUpdateOutcome = { accepted: true } | { accepted: false; type: string; message: string };

/** Sends an update as raw payloads and waits for its outcome, retrying while the server is busy with others. */
export async function rawUpdate(client: Client, workflowId: string, name: string, payloads: Payload[]): Promise<RawUpdateOutcome> {
  const updateId = randomUUID();
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await client.workflowService.updateWorkflowExecution({
        namespace: client.options.namespace,
        workflowExecution: { workflowId },
        waitPolicy: { lifecycleStage: COMPLETED },
        request: { meta: { updateId, identity: 'hostile-fuzz' }, input: { name, args: { payloads } } },
      });
      const outcome = response.outcome;
      if (!outcome) continue;
      if (outcome.success) return { accepted: true };
      const failure = outcome.failure;
      return { accepted: false, type: failure?.applicationFailureInfo?.type ?? '?', message: failure?.message ?? '' };
    } catch (error) {
      // RESOURCE_EXHAUSTED (updates in flight) and a workflow task still running are worth a retry.
      const code = (error as { code?: number }).code;
      if (attempt > 100 || (code !== 8 && code !== 9 && code !== 14 && code !== 4)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
