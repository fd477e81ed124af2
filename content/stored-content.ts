/**
 * Content by reference in turn messages: images and documents in user messages and large tool
 * outputs are kept in the content store, and only a reference travels in workflow history.
 *
 * - {@link storeLargeParts}: before a turn starts (TurnpikeClient, the HTTP API), every inline
 *   image or document of `thresholdBytes` or more becomes a `stored` source.
 * - {@link storeLargeOutput}: after a server tool runs, an output of `thresholdBytes` or more as
 *   JSON becomes a {@link StoredOutput}.
 * - {@link readStoredContent}: when a model step builds its provider request, both are read back
 *   (and their hashes checked), so providers get the bytes in their wire formats as before.
 *
 * A reference that cannot be read fails the step with an `ApplicationFailure` of type
 * `ContentMissing` or `ContentCorrupt` that names it, retryable: the step's retry policy gives a
 * store that lost its connection time to come back, and no turn goes on without its content.
 */
import { ApplicationFailure } from '@temporalio/common';
import { DEFAULT_CLAIM_THRESHOLD_BYTES } from './claim-check-codec.js';
import { ContentUnavailableError, contentRef, keyOfRef, readVerified, storeContent, type ContentStore } from './content-store.js';
import type { ExecuteToolResult, Message, StoredOutput, StoredSource, UserContentPart } from '../workflows/types/index.js';

/** Inline parts and tool outputs this big or bigger are stored: the claim-check codec's threshold. */
export const DEFAULT_STORE_THRESHOLD_BYTES = DEFAULT_CLAIM_THRESHOLD_BYTES;

/**
 * The most of one stored tool output a model step sends: 1 MiB of its JSON. No provider takes
 * more in one request (Anthropic refuses requests over 32 MB, and a model's context is a few MB
 * of text at most), so a larger output reaches the model as its first 1 MiB and a note with its
 * size and reference, while the whole output stays in the store for the caller.
 */
export const DEFAULT_MODEL_OUTPUT_BYTES = 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `messages` with every inline image or document of `thresholdBytes` or more stored, and referenced. */
export async function storeLargeParts<M extends Message>(messages: readonly M[], store: ContentStore, thresholdBytes = DEFAULT_STORE_THRESHOLD_BYTES): Promise<M[]> {
  return Promise.all(
    messages.map(async (message) => {
      if (message?.role !== 'user' || !Array.isArray(message.content)) return message;
      const content = await Promise.all(message.content.map((part) => storePart(part, store, thresholdBytes)));
      return content.every((part, index) => part === (message.content as UserContentPart[])[index]) ? message : { ...message, content };
    }),
  );
}

/** The parts of one user message, with every inline image or document of `thresholdBytes` or more stored. */
export async function storeLargeContent(content: readonly UserContentPart[], store: ContentStore, thresholdBytes = DEFAULT_STORE_THRESHOLD_BYTES): Promise<UserContentPart[]> {
  return Promise.all(content.map((part) => storePart(part, store, thresholdBytes)));
}

async function storePart(part: UserContentPart, store: ContentStore, thresholdBytes: number): Promise<UserContentPart> {
  if ((part?.type !== 'image' && part?.type !== 'document') || part.source?.type !== 'base64') return part;
  // Three base64 characters in four carry a byte: cheaper than decoding a small part to measure it.
  if (typeof part.source.data !== 'string' || (part.source.data.length * 3) / 4 < thresholdBytes) return part;
  const bytes = Buffer.from(part.source.data, 'base64');
  // Not valid base64 (Node skips what it cannot read): left inline, for the turn to refuse by name.
  if (bytes.toString('base64') !== part.source.data) return part;
  const key = await storeContent(store, bytes);
  const source: StoredSource = { type: 'stored', ref: contentRef(key), mediaType: part.source.mediaType, bytes: bytes.length };
  return { ...part, source };
}

/** The tool's result with an output of `thresholdBytes` or more (as JSON) stored, and referenced. */
export async function storeLargeOutput(result: ExecuteToolResult, store: ContentStore, thresholdBytes = DEFAULT_STORE_THRESHOLD_BYTES): Promise<ExecuteToolResult> {
  const json = JSON.stringify(result.output ?? null);
  // A string's length is at most its UTF-8 size: short ones need no encoding to be measured.
  if (json.length * 3 < thresholdBytes) return result;
  const bytes = encoder.encode(json);
  if (bytes.length < thresholdBytes) return result;
  const key = await storeContent(store, bytes);
  const output: StoredOutput = { turnpikeStored: contentRef(key), mediaType: 'application/json', bytes: bytes.length };
  return { ...result, output };
}

/** Whether a tool output is a reference to stored content. */
export function isStoredOutput(output: unknown): output is StoredOutput {
  const candidate = output as Partial<StoredOutput> | null;
  return typeof candidate === 'object' && candidate !== null && keyOfRef(candidate.turnpikeStored) !== undefined && candidate.mediaType === 'application/json';
}

/** The output a {@link StoredOutput} stands for, read from the store (and its hash checked). */
export async function readStoredOutput(output: StoredOutput, store: ContentStore): Promise<unknown> {
  const bytes = await readVerified(store, keyOfRef(output.turnpikeStored) as string);
  return JSON.parse(decoder.decode(bytes));
}

/**
 * `messages` with every stored image, document and tool output read back inline, for a model
 * step's provider request. Each reference is read once, however many times it appears.
 */
export async function readStoredContent(messages: readonly Message[], store: ContentStore, modelOutputBytes = DEFAULT_MODEL_OUTPUT_BYTES): Promise<Message[]> {
  const reads = new Map<string, Promise<Uint8Array>>();
  const read = (ref: string): Promise<Uint8Array> => {
    let pending = reads.get(ref);
    if (!pending) {
      pending = readVerified(store, keyOfRef(ref) ?? '').catch((error: unknown) => {
        throw asStepFailure(error, ref, store);
      });
      reads.set(ref, pending);
    }
    return pending;
  };
  return Promise.all(
    messages.map(async (message): Promise<Message> => {
      if (message.role === 'user' && Array.isArray(message.content)) {
        const content = await Promise.all(
          message.content.map(async (part): Promise<UserContentPart> => {
            if ((part.type !== 'image' && part.type !== 'document') || part.source.type !== 'stored') return part;
            const bytes = await read(part.source.ref);
            return { ...part, source: { type: 'base64', mediaType: part.source.mediaType, data: Buffer.from(bytes).toString('base64') } };
          }),
        );
        return { ...message, content };
      }
      if (message.role === 'tool') {
        const content = await Promise.all(
          message.content.map(async (part) => (isStoredOutput(part.output) ? { ...part, output: modelView(part.output, await read(part.output.turnpikeStored), modelOutputBytes) } : part)),
        );
        return { ...message, content };
      }
      return message;
    }),
  );
}

/** What the model gets of a stored output: all of it, or its first `limit` bytes of JSON and a note. */
function modelView(output: StoredOutput, bytes: Uint8Array, limit: number): unknown {
  if (bytes.length <= limit) return JSON.parse(decoder.decode(bytes)) as unknown;
  // A character cut in two at the end decodes to U+FFFD: left out.
  const head = decoder.decode(bytes.subarray(0, limit)).replace(/\uFFFD$/, '');
  return `${head}\n\n[turnpike: this tool output is ${bytes.length} bytes of JSON; the first ${limit} are shown. The whole output is kept as ${output.turnpikeStored}.]`;
}

/** A read that failed, as the step's failure: typed and naming the reference when the content is missing or corrupt. */
function asStepFailure(error: unknown, ref: string, store: ContentStore): unknown {
  if (error instanceof ContentUnavailableError) {
    const type = error.reason === 'missing' ? 'ContentMissing' : 'ContentCorrupt';
    return ApplicationFailure.create({ message: error.message, type, details: [{ ref: error.ref, store: store.kind ?? 'content' }] });
  }
  if (keyOfRef(ref) === undefined) return ApplicationFailure.nonRetryable(`Not a content reference: ${JSON.stringify(ref)}`, 'InvalidContentReference');
  return error;
}
