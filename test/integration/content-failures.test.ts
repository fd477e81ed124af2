/**
 * Stored content that cannot be read, on the real dev server: a turn's PDF, kept in the content
 * store, is corrupted (or deleted) after the turn starts and before its model step reads it. The
 * step fails with a retryable `ContentCorrupt` (or `ContentMissing`) ApplicationFailure naming
 * the reference, visible on the turn's pending activity; once the right bytes are back, the
 * step's next attempt reads them, the turn completes and the model got the PDF byte for byte.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contentKey } from '../../content/content-store.js';
import { pdfOf, pdfsSent, sha, startContentTurnpike, type ContentTurnpike } from '../support/content-fixtures.js';
import { noteStarted } from '../support/history-recorder.js';

let context: ContentTurnpike;
let fake: ContentTurnpike['fake'];
let turnpike: ContentTurnpike['turnpike'];
let client: ContentTurnpike['client'];
let store: ContentTurnpike['store'];
let folder: string;

beforeAll(async () => {
  context = await startContentTurnpike([]);
  ({ fake, turnpike, client, store, folder } = context);
});
afterAll(() => context?.stop());
beforeEach(() => fake.reset());

/** Polls the turn's pending activity until its last failure is an ApplicationFailure of `type`. */
async function waitForStepFailure(handle: WorkflowHandle, type: string): Promise<{ message: string; type: string; nonRetryable: boolean; attempt: number; details: unknown[] }> {
  const deadline = Date.now() + 90_000;
  let last: unknown;
  for (;;) {
    const description = await handle.describe();
    const activity = description.raw.pendingActivities?.[0];
    const failure = activity?.lastFailure;
    last = { status: description.status.name, activity: activity?.activityType?.name, failure: failure?.message, type: failure?.applicationFailureInfo?.type };
    if (failure?.applicationFailureInfo?.type === type) {
      const details = await decodeArrayFromPayloads(turnpike.client.options.loadedDataConverter, failure.applicationFailureInfo.details?.payloads);
      return { message: failure.message ?? '', type, nonRetryable: !!failure.applicationFailureInfo.nonRetryable, attempt: activity?.attempt ?? 0, details };
    }
    if (Date.now() > deadline) throw new Error(`the turn's step never failed with ${type}; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** True when `text` names neither the store's folder nor a `file:` location. */
function withoutPaths(text: string): boolean {
  return !text.includes(folder) && !text.includes('file:/');
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
    // It names the store's kind, not the worker's folder: the message reaches histories and callers.
    expect(failure.message).toContain('the file content store');
    expect(failure.details).toEqual([{ ref: `sha256:${key}`, store: 'file' }]);
    expect(withoutPaths(JSON.stringify([failure.message, failure.details]))).toBe(true);
    // Nothing reached the model while the content could not be read.
    expect(fake.requests).toEqual([]);

    // The right bytes back, through the store (a put over a spoilt file would only refresh it).
    rmSync(file, { force: true });
    await store.put(key, pdf);
    const result = await client.turnResult(turnId, { pollIntervalMs: 100 });
    expect(result.status).toBe('completed');
    expect(result.text).toBe('The PDF is a report.');
    expect(fake.requests.map((request) => request.errors)).toEqual([[]]);
    expect(pdfsSent(fake.requests[0]!)).toEqual([sha(pdf)]);
    // Neither the result, the turn's events nor its history (where the step's last failure is kept) holds the folder.
    const events = [];
    for await (const event of client.turnEvents(turnId)) events.push(event);
    const history = await handle.fetchHistory();
    expect(JSON.stringify(history)).toContain(`sha256:${key}`);
    expect(withoutPaths(JSON.stringify(result))).toBe(true);
    expect(withoutPaths(JSON.stringify(events))).toBe(true);
    expect(withoutPaths(JSON.stringify(history))).toBe(true);
    console.log(`content-failures: ${type} after ${failure.attempt} attempt(s): ${failure.message}`);
  });
});
