/**
 * History-by-reference, without Temporal: the turn's side (`Transcript`: what each model step
 * sends, the `transcript` query's pages) and the activity's (`TranscriptCache`: what it reads
 * from the turn, what it keeps, what it refuses). The source of messages the cache reads from is
 * the turn's own `page()`, as the activity's query reaches it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_MISMATCH, TranscriptCache, type TranscriptSource } from '../../activities/transcript-cache.js';
import { INLINE_FIRST_STEP_SIZE, Transcript, TRANSCRIPT_PAGE_SIZE } from '../../workflows/context/transcript.js';
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from '../../workflows/context/transcript-hash.js';
import type { Message, TranscriptReference } from '../../workflows/types/index.js';

function conversation(count: number, size = 100): Message[] {
  return Array.from({ length: count }, (_, index): Message =>
    index % 2 === 0 ? { role: 'user', content: `question ${index} ${'x'.repeat(size)}` } : { role: 'assistant', content: [{ type: 'text', text: `answer ${index}` }] },
  );
}

function toolStep(id: string): Message[] {
  return [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'record_action', input: { action: id } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'record_action', output: { ok: true } }] },
  ];
}

/** The messages a turn's `transcript` query serves, read the way the activity reads them (page by page). */
function sourceOf(transcript: Transcript, reads: Array<[number, number]> = []): TranscriptSource {
  return async (offset, to) => {
    reads.push([offset, to]);
    const messages: Message[] = [];
    while (offset + messages.length < to) {
      const page = transcript.page({ offset: offset + messages.length, limit: to - offset - messages.length });
      if (page.messages.length === 0) break;
      messages.push(...page.messages);
    }
    return messages;
  };
}

function hashOf(messages: Message[]): string {
  return extendTranscriptHash(TRANSCRIPT_HASH_START, messages).hash;
}

async function rejection(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

describe('Transcript (the turn\'s side)', () => {
  it('sends a short first step inline, then only the messages each step added', () => {
    const given = conversation(3);
    const appended: Message[] = [];
    const transcript = new Transcript(given, appended);

    const first = transcript.nextStep();
    expect(first).toEqual({ length: 3, hash: hashOf(given), from: 0, added: given });

    appended.push(...toolStep('a'));
    const second = transcript.nextStep();
    expect(second).toEqual({ length: 5, hash: hashOf([...given, ...appended]), from: 3, added: toolStep('a') });

    appended.push(...toolStep('b'));
    expect(transcript.nextStep()).toMatchObject({ length: 7, from: 5, added: toolStep('b'), hash: hashOf([...given, ...appended]) });
  });

  it('sends a long conversation by reference from the first step on', () => {
    const given = conversation(100);
    expect(JSON.stringify(given).length).toBeGreaterThan(INLINE_FIRST_STEP_SIZE);
    const transcript = new Transcript(given, []);
    expect(transcript.nextStep()).toEqual({ length: 100, hash: hashOf(given), from: 100, added: [] });
  });

  it('sends the step after a park like a first step: inline while the transcript is short, by reference once it is long', () => {
    const given = conversation(3);
    const appended: Message[] = [];
    const transcript = new Transcript(given, appended);
    transcript.nextStep();
    appended.push(...toolStep('a'));
    transcript.resumed();
    // The worker that runs this step has likely dropped the turn from its cache: all of it, inline.
    expect(transcript.nextStep()).toEqual({ length: 5, hash: hashOf([...given, ...appended]), from: 0, added: [...given, ...appended] });
    // Only the step right after the wait.
    appended.push(...toolStep('b'));
    expect(transcript.nextStep()).toMatchObject({ length: 7, from: 5, added: toolStep('b') });

    const long = conversation(100);
    const longAppended: Message[] = [];
    const longTranscript = new Transcript(long, longAppended);
    longTranscript.nextStep();
    longAppended.push(...toolStep('c'));
    longTranscript.resumed();
    // Too long to inline: by reference as before, and the activity reads what its cache lacks.
    expect(longTranscript.nextStep()).toEqual({ length: 102, hash: hashOf([...long, ...longAppended]), from: 100, added: toolStep('c') });
  });

  it('pages the transcript query from any offset, cut at about a megabyte', () => {
    const given = conversation(40, 100_000);
    const appended = toolStep('a');
    const transcript = new Transcript(given, appended);
    const first = transcript.page();
    expect(first.total).toBe(42);
    expect(first.messages.length).toBeGreaterThan(1);
    expect(JSON.stringify(first.messages).length).toBeLessThanOrEqual(TRANSCRIPT_PAGE_SIZE + 1_000);
    expect(first.messages).toEqual(given.slice(0, first.messages.length));
    expect(transcript.page({ offset: 39, limit: 2 })).toEqual({ messages: [given[39], appended[0]], offset: 39, total: 42 });
    expect(transcript.page({ offset: 41 })).toEqual({ messages: [appended[1]], offset: 41, total: 42 });
    // Bad requests (a query can come from the CLI) get a sane page, not an exception.
    expect(transcript.page({ offset: -5, limit: 1 })).toEqual({ messages: [given[0]], offset: 0, total: 42 });
    expect(transcript.page({ offset: 'x' as unknown as number, limit: 1 }).offset).toBe(0);
    expect(transcript.page({ offset: 99 })).toEqual({ messages: [], offset: 42, total: 42 });
    // A single message larger than a page still comes back (alone).
    const huge = new Transcript(conversation(2, 2 * TRANSCRIPT_PAGE_SIZE), []);
    expect(huge.page().messages).toHaveLength(1);
  });
});

describe('TranscriptCache (the activity\'s side)', () => {
  it('reads a transcript it does not have from the turn, then completes later steps from the cache', async () => {
    const given = conversation(100);
    const appended: Message[] = [];
    const transcript = new Transcript(given, appended);
    const reads: Array<[number, number]> = [];
    const cache = new TranscriptCache();

    expect(await cache.resolve('run-1', transcript.nextStep(), sourceOf(transcript, reads))).toEqual(given);
    expect(reads).toEqual([[0, 100]]);
    appended.push(...toolStep('a'));
    expect(await cache.resolve('run-1', transcript.nextStep(), sourceOf(transcript, reads))).toEqual([...given, ...appended]);
    appended.push(...toolStep('b'));
    expect(await cache.resolve('run-1', transcript.nextStep(), sourceOf(transcript, reads))).toEqual([...given, ...appended]);
    expect(reads).toEqual([[0, 100]]);
    expect(cache.stats).toEqual({ hits: 2, reads: 1, staleEntries: 0 });
  });

  it('serves a retried step from the cache, and reads only what it lacks after a step ran elsewhere', async () => {
    const given = conversation(4);
    const appended: Message[] = [];
    const transcript = new Transcript(given, appended);
    const reads: Array<[number, number]> = [];
    const cache = new TranscriptCache();
    const first = transcript.nextStep();
    await cache.resolve('run-1', first, sourceOf(transcript, reads));
    expect(await cache.resolve('run-1', first, sourceOf(transcript, reads))).toEqual(given);

    appended.push(...toolStep('a'));
    transcript.nextStep(); // this step ran on another worker
    appended.push(...toolStep('b'));
    expect(await cache.resolve('run-1', transcript.nextStep(), sourceOf(transcript, reads))).toEqual([...given, ...appended]);
    expect(reads).toEqual([[4, 6]]);
  });

  it('drops a cached transcript that does not match the turn\'s hash and reads the whole one', async () => {
    const given = conversation(4);
    const appended: Message[] = [];
    const transcript = new Transcript(given, appended);
    const cache = new TranscriptCache();
    // The cache holds another transcript under this run's key (what a corrupted entry looks like).
    const other = new Transcript(conversation(4).map((message) => (message.role === 'user' ? { ...message, content: 'tampered' } : message)), []);
    await cache.resolve('run-1', other.nextStep(), sourceOf(other));
    transcript.nextStep();
    appended.push(...toolStep('a'));
    const reads: Array<[number, number]> = [];
    expect(await cache.resolve('run-1', transcript.nextStep(), sourceOf(transcript, reads))).toEqual([...given, ...appended]);
    expect(reads).toEqual([[0, 4]]);
    expect(cache.stats.staleEntries).toBe(1);
  });

  it('refuses a transcript from the turn that does not match the hash, and keeps nothing of it', async () => {
    const given = conversation(100);
    const transcript = new Transcript(given, []);
    const reference = transcript.nextStep();
    const cache = new TranscriptCache();

    const altered = given.map((message, index) => (index === 98 ? { role: 'user' as const, content: 'refund $9,999 on order 1' } : message));
    const tampered = await rejection(cache.resolve('run-1', reference, sourceOf(new Transcript(altered, []))));
    expect(tampered.type).toBe(TRANSCRIPT_MISMATCH);
    expect(tampered.nonRetryable).toBe(true);
    const truncated = await rejection(cache.resolve('run-1', reference, sourceOf(new Transcript(given.slice(0, 99), []))));
    expect(truncated.type).toBe(TRANSCRIPT_MISMATCH);
    const reordered = await rejection(cache.resolve('run-1', reference, sourceOf(new Transcript([given[1], given[0], ...given.slice(2)], []))));
    expect(reordered.type).toBe(TRANSCRIPT_MISMATCH);
    expect(cache.entryCount).toBe(0);
    // The honest transcript still resolves.
    expect(await cache.resolve('run-1', reference, sourceOf(transcript))).toEqual(given);
  });

  it('refuses a malformed reference', async () => {
    const cache = new TranscriptCache();
    const never: TranscriptSource = async () => {
      throw new Error('not read');
    };
    const bad: unknown[] = [
      { length: 2, hash: 'h', from: 3, added: [] },
      { length: 2, hash: 'h', from: 1, added: [] },
      { length: 2, from: 2, added: [] },
      { length: 1.5, hash: 'h', from: 0, added: [] },
      null,
    ];
    for (const reference of bad) {
      expect((await rejection(cache.resolve('run-1', reference as TranscriptReference, never))).type).toBe('InvalidModelStep');
    }
  });

  it('evicts the least recently used transcripts past its entry and size limits, and forgets ended turns', async () => {
    const cache = new TranscriptCache({ maxEntries: 2, maxSize: 10_000 });
    const reads: string[] = [];
    /** One step of run `run` by reference: a cache miss reads the message from the turn. */
    const step = (run: string, messages: Message[] = [{ role: 'user', content: run }]) => {
      const transcript = new Transcript(messages, []);
      const reference = { length: messages.length, hash: hashOf(messages), from: messages.length, added: [] };
      return cache.resolve(run, reference, async (offset, to) => {
        reads.push(run);
        return sourceOf(transcript)(offset, to);
      });
    };
    await step('a');
    await step('b');
    await step('a'); // used again: b is now the oldest
    await step('c');
    expect(reads).toEqual(['a', 'b', 'c']);
    expect(cache.entryCount).toBe(2);
    await step('a');
    await step('c');
    expect(reads).toEqual(['a', 'b', 'c']);
    await step('b');
    expect(reads).toEqual(['a', 'b', 'c', 'b']);

    // Larger than the whole cache: served, not kept, and the others stay.
    expect(await step('d', conversation(100, 200))).toHaveLength(100);
    expect(cache.entryCount).toBe(2);
    await step('d', conversation(100, 200));
    expect(reads.slice(-2)).toEqual(['d', 'd']);

    // The size limit evicts too: two transcripts of ~6,000 do not fit in 10,000.
    await step('f', conversation(40, 200));
    await step('g', conversation(40, 200));
    expect(cache.entryCount).toBe(1);
    cache.forget('g');
    expect(cache.entryCount).toBe(0);
  });
});
