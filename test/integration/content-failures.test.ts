/**
 * Stored content that cannot be read, on the real dev server: a turn's PDF, kept in the content
 * store, is corrupted (or deleted) after the turn starts and before its model step reads it. The
 * step fails with a retryable `ContentCorrupt` (or `ContentMissing`) ApplicationFailure naming
 * the reference, visible on the turn's pending activity; once the right bytes are back, the
 * step's next attempt reads them, the turn completes and the model got the PDF byte for byte.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { contentKey } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import type { RecordedRequest } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let folder: string;
let store: FileContentStore;

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'turnpike-content-failures-'));
  store = new FileContentStore(folder);
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: [], contentStore: store });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, contentStore: store });
});
afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
  if (folder) rmSync(folder, { recursive: true, force: true });
});
beforeEach(() => fake.reset());

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A 300 KB PDF-shaped file no other test shares: stored, not inline. */
function pdfOf(bytes: number): Buffer {
  return Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(bytes), Buffer.from('\n%%EOF\n')]);
}

function pdfsSent(request: RecordedRequest): string[] {
  const messages = (request.body as { messages: Array<{ content: unknown }> }).messages;
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? (message.content as Array<{ type: string; file?: { file_data?: string } }>).flatMap((part) =>
          part.type === 'file' && part.file?.file_data ? [part.file.file_data.replace(/^data:application\/pdf;base64,/, '')] : [],
        )
      : [],
  );
}

/** Polls the turn's pending activity until its last failure is an ApplicationFailure of `type`. */
async function waitForStepFailure(handle: WorkflowHandle, type: string): Promise<{ message: string; type: string; nonRetryable: boolean; attempt: number }> {
  const deadline = Date.now() + 90_000;
  let last: unknown;
  for (;;) {
    const description = await handle.describe();
    const activity = description.raw.pendingActivities?.[0];
    const failure = activity?.lastFailure;
    last = { status: description.status.name, activity: activity?.activityType?.name, failure: failure?.message, type: failure?.applicationFailureInfo?.type };
    if (failure?.applicationFailureInfo?.type === type) {
      return { message: failure.message ?? '', type, nonRetryable: !!failure.applicationFailureInfo.nonRetryable, attempt: activity?.attempt ?? 0 };
    }
    if (Date.now() > deadline) throw new Error(`the turn's step never failed with ${type}; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('stored content that cannot be read', () => {
  const cases: Array<[string, 'ContentCorrupt' | 'ContentMissing', (file: string) => void]> = [
    ['corrupted', 'ContentCorrupt', (file) => writeFileSync(file, pdfOf(1024))],
    ['deleted', 'ContentMissing', (file) => rmSync(file)],
  ];

  it.each(cases)('a PDF %s before the step reads it fails the step with a retryable %s naming it; the right bytes back, the turn completes', async (_, type, spoil) => {
    const pdf = pdfOf(300 * 1024);
    const key = contentKey(pdf);
    const file = path.join(folder, key.slice(0, 2), key);
    fake.script('openai', [{ text: 'The PDF is a report.' }]);

    // No worker while the turn starts and its PDF is spoilt, so no step has read it yet.
    await turnpike.stopWorker();
    const turnId = `turn-${randomUUID()}`;
    const handle = await client.startTurn(
      {
        model: { provider: 'openai', model: 'gpt-4.1-mini' },
        modelCallOptions: { retry: { initialInterval: '200ms', maximumInterval: '1s', maximumAttempts: 1_000 } },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: pdf.toString('base64') }, filename: 'report.pdf' }] }],
      },
      { turnId },
    );
    noteStarted(handle);
    spoil(file);
    await turnpike.startWorker();

    const failure = await waitForStepFailure(handle, type);
    expect(failure.message).toContain(`sha256:${key}`);
    expect(failure.nonRetryable).toBe(false);
    // Nothing reached the model while the content could not be read.
    expect(fake.requests).toEqual([]);

    // The right bytes back, through the store (a put over a spoilt file would only refresh it).
    rmSync(file, { force: true });
    await store.put(key, pdf);
    const result = await client.turnResult(turnId, { pollIntervalMs: 100 });
    expect(result.status).toBe('completed');
    expect(result.text).toBe('The PDF is a report.');
    expect(fake.requests.map((request) => request.errors)).toEqual([[]]);
    expect(pdfsSent(fake.requests[0]!).map((data) => sha(Buffer.from(data, 'base64')))).toEqual([sha(pdf)]);
    console.log(`content-failures: ${type} after ${failure.attempt} attempt(s): ${failure.message}`);
  });
});
