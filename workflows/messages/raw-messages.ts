/**
 * Message arguments taken raw and decoded here, where a payload that does not decode becomes a
 * value its handler refuses instead of an error that fails the workflow task.
 *
 * Why: the SDK decodes a signal's arguments before any handler runs (`arrayFromPayloads` in
 * `@temporalio/workflow`'s `signalWorkflow`), and a payload it cannot decode — invalid JSON such
 * as Python's `NaN`, an encoding it does not know, protobuf where JSON is expected — throws
 * there and fails the workflow task. The signal stays in history, so every retry fails the same
 * way and the turn never moves again. (An update whose arguments do not decode is rejected, but
 * with the parser's message as its type.) Handlers defined here declare their arguments as the
 * SDK's `rawValueTypeInfo`: the payload codec still runs (turnpike's never throws, see
 * codec/payload-codec.ts), the payload converter does not, and the handler gets a `RawValue`
 * that {@link decodeArgument} decodes, with the workflow's own payload converter, inside a try.
 *
 * Only these handlers' arguments: a turn's input, its memo, activity and child results still go
 * through the SDK and fail loudly, as they should: a workflow task retried once the worker is
 * fixed can succeed there, and a turn must not go on with a value it could not read.
 *
 * Workflow code: deterministic, no Node APIs.
 */
import * as wf from '@temporalio/workflow';
import { defaultPayloadConverter, rawValueTypeInfo, type Payload, type PayloadConverter, type TypeInfo, type UpdateDefinition } from '@temporalio/common';
import { maybeGetActivator } from '@temporalio/workflow/lib/global-attributes.js';

/** The encoding turnpike's payload codec gives a payload it could not decode (codec/payload-codec.ts; no Node import here). */
const UNDECODABLE_ENCODING = 'binary/turnpike-undecodable';
const UNDECODABLE_REASON_KEY = 'turnpike-undecodable';

/**
 * `rawValueTypeInfo` at every index: the SDK reads `inputTypes[i]` for the i-th payload, and a
 * sender may send any number of them. Read-only, so the SDK's freezing of shared modules keeps it intact.
 */
const RAW_ARGUMENTS: readonly TypeInfo[] = new Proxy([] as TypeInfo[], {
  get: (target, property, receiver) => (typeof property === 'string' && /^\d+$/.test(property) ? rawValueTypeInfo : Reflect.get(target, property, receiver)),
});

/** An update definition whose handler and validator get `RawValue`s (for the workflow's side only). */
export function rawUpdate<Ret>(name: string): UpdateDefinition<Ret, [unknown]> {
  return wf.defineUpdate<Ret, [unknown]>(name, { typeInfo: { inputTypes: RAW_ARGUMENTS } });
}

/** A signal definition whose handler gets `RawValue`s (for the workflow's side only). */
export function rawSignal(name: string): wf.SignalDefinition<[unknown]> {
  return wf.defineSignal<[unknown]>(name, { typeInfo: { inputTypes: RAW_ARGUMENTS } });
}

/** A decoded argument, or why it could not be decoded (in turnpike's words, never the payload's content). */
export type Decoded = { ok: true; value: unknown } | { ok: false; reason: string };

/** Decodes a message's first argument, as a handler registered with {@link rawUpdate} or {@link rawSignal} gets it. Never throws. */
export function decodeArgument(raw: unknown): Decoded {
  if (raw === undefined) return { ok: false, reason: 'it has no argument' };
  const payload = (raw as { payload?: Payload } | null)?.payload;
  if (!payload || typeof payload !== 'object') return { ok: false, reason: 'its argument is not a payload' };
  const metadata = payload.metadata;
  const encodingBytes = metadata?.encoding;
  if (!metadata || !isBytes(encodingBytes)) return { ok: false, reason: 'its payload has no encoding' };
  const encoding = safeText(encodingBytes);
  const described = describeEncoding(encoding, encodingBytes.length);
  if (encoding === UNDECODABLE_ENCODING) {
    const reasonBytes = metadata[UNDECODABLE_REASON_KEY];
    return { ok: false, reason: isBytes(reasonBytes) ? safeText(reasonBytes) : 'the payload codec could not decode it' };
  }
  try {
    return { ok: true, value: payloadConverter().fromPayload(payload) };
  } catch (error) {
    const unknownEncoding = error instanceof Error && /unknown encoding/i.test(error.message);
    return { ok: false, reason: unknownEncoding ? `its encoding ${described} is not one this worker reads` : `its ${described} data does not decode` };
  }
}

/** The payload converter the workflow runs with: the worker's (`payloadConverterPath`), else the SDK's default. */
function payloadConverter(): PayloadConverter {
  return (maybeGetActivator() as { payloadConverter?: PayloadConverter } | undefined)?.payloadConverter ?? defaultPayloadConverter;
}

/** An encoding by name when it reads as one (`json/plain`), else by its size: a refusal does not quote the sender's bytes. */
function describeEncoding(encoding: string, bytes: number): string {
  return bytes <= 64 && /^[A-Za-z0-9._+/-]{1,64}$/.test(encoding) ? `"${encoding}"` : `(${bytes} bytes)`;
}

/** Bytes from the worker (possibly of another realm than the workflow's, so no `instanceof`). */
function isBytes(value: unknown): value is Uint8Array {
  return ArrayBuffer.isView(value);
}

/** At most 200 characters of UTF-8 text; the reason comes from turnpike's codec, the encoding from the sender. */
function safeText(bytes: Uint8Array): string {
  try {
    // Made per call: shared workflow modules are frozen once loaded (see preload.ts).
    return new TextDecoder().decode(bytes.length > 800 ? bytes.subarray(0, 800) : bytes).slice(0, 200);
  } catch {
    return '';
  }
}
