/**
 * Files in an A2A task's message, driven only by `@a2a-js/sdk`'s own client over real HTTP, to an
 * agent on the strict fake Anthropic API: a PNG sent as raw bytes reaches the model as an image
 * block, byte for byte; a 200 KiB PDF goes by reference through the content store (the turn's
 * history holds its reference, not its bytes) and still reaches the model whole; files of another
 * media type, by URL, oversized or without bytes or media type are refused with the protocol's
 * errors, and nothing starts, is stored or reaches the model.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { answerText, sendTask as sendTo } from '../support/a2a-client.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { taskIdFor } from '../../api/a2a/a2a-request-handler.js';
import { A2A_INPUT_MODES, MAX_A2A_FILE_BYTES } from '../../api/a2a/a2a-parts.js';
import type { Json, RecordedRequest } from '../fake-provider/server.js';
import { pdfOf, pdfsSent, sha, storedKeys } from '../support/content-fixtures.js';
import { useA2aContentAgent } from '../support/a2a-content-agent.js';
import { historyText } from '../support/history-text.js';

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

const served = useA2aContentAgent('viewer', { description: 'Looks at images and documents', model: { provider: 'anthropic', model: 'claude-sonnet-4-6' } });
beforeEach(() => served.context.fake.reset());

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function file(bytes: Buffer, mediaType: string, filename = ''): Part {
  return { content: { $case: 'raw', value: bytes }, metadata: undefined, filename, mediaType };
}

function message(parts: Part[]): Message {
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const sendTask = (sent: Message): Promise<Task> => sendTo(served.alice, sent);

/** The Anthropic image blocks of a recorded request: their media type and the SHA-256 of their bytes. */
function imagesSent(request: RecordedRequest): Array<{ mediaType: string; sha: string }> {
  const messages = (request.body as { messages: Array<{ content: Json }> }).messages;
  return messages.flatMap((entry) => (Array.isArray(entry.content) ? (entry.content as Array<Record<string, Json>>) : []))
    .filter((block) => block.type === 'image')
    .map((block) => {
      const source = block.source as Record<string, string>;
      expect(source.type).toBe('base64');
      return { mediaType: source.media_type!, sha: sha(Buffer.from(source.data!, 'base64')) };
    });
}

/** Everything the turn's start recorded in its history (its input), as text. */
async function startedInput(taskId: string): Promise<string> {
  const history = await served.context.turnpike.client.workflow.getHandle(taskId).fetchHistory();
  return historyText(history.events![0]!.workflowExecutionStartedEventAttributes!.input);
}

describe('A2A file parts', () => {
  it('lists the accepted media types on the Agent Card', async () => {
    const card = await served.alice.getAgentCard();
    expect(card.defaultInputModes).toEqual(['text/plain', 'application/json', 'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf']);
    expect(card.defaultInputModes).toEqual([...A2A_INPUT_MODES]);
  });

  it('sends a PNG sent as raw bytes to the model as an image, byte for byte, after the text', async () => {
    served.context.fake.script('anthropic', [{ text: 'A single grey pixel.' }]);
    const task = await sendTask(message([text('What is in this picture?'), file(PNG, 'image/png', 'pixel.png')]));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('A single grey pixel.');
    const requests = served.context.fake.requests.filter((request) => request.provider === 'anthropic');
    expect(requests.map((request) => request.errors)).toEqual([[]]);
    expect(imagesSent(requests[0]!)).toEqual([{ mediaType: 'image/png', sha: sha(PNG) }]);
    const [user] = (requests[0]!.body as { messages: Array<{ role: string; content: Array<Record<string, Json>> }> }).messages;
    expect(user!.role).toBe('user');
    expect(user!.content.map((block) => block.type)).toEqual(['text', 'image']);
    expect(user!.content[0]!.text).toBe('What is in this picture?');
    // A small image travels inline in the turn's input.
    const input = await startedInput(task.id);
    expect(input).toContain(PNG.toString('base64'));
  });

  it('keeps a 200 KiB PDF in the content store: the turn holds its reference, the model gets its bytes', async () => {
    const pdf = pdfOf(200 * 1024);
    served.context.fake.script('anthropic', [{ text: 'A report of many pages.' }]);
    const task = await sendTask(message([text('Summarise this report.'), file(pdf, 'application/pdf', 'report.pdf')]));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('A report of many pages.');
    const requests = served.context.fake.requests.filter((request) => request.provider === 'anthropic');
    expect(requests.map((request) => request.errors)).toEqual([[]]);
    expect(pdfsSent(requests[0]!)).toEqual([sha(pdf)]);
    expect(await storedKeys(served.context.store)).toContain(sha(pdf));
    const input = await startedInput(task.id);
    expect(input).toContain(`"source":{"type":"stored","ref":"sha256:${sha(pdf)}","mediaType":"application/pdf","bytes":${pdf.length}}`);
    expect(input).toContain('"filename":"report.pdf"');
    expect(input).not.toContain(pdf.subarray(9, 3009).toString('base64'));
    expect(input.length).toBeLessThan(4 * 1024);
  });

  it('refuses other media types, files by url, oversized files, too many small files and files without bytes or media type: nothing starts, is stored or reaches the model', async () => {
    const keysBefore = await storedKeys(served.context.store);
    const cases: Array<[Message, string, RegExp]> = [
      [message([text('read this'), file(Buffer.from('a,b\n1,2\n'), 'text/csv', 'table.csv')]), 'ContentTypeNotSupportedError', /type "text\/csv" are not taken; accepted: image\/png, image\/jpeg, image\/gif, image\/webp, application\/pdf/],
      [message([text('read this'), { content: { $case: 'url', value: 'https://files.example/report.pdf' }, metadata: undefined, filename: 'report.pdf', mediaType: 'application/pdf' }]), 'ContentTypeNotSupportedError', /files by url are not taken/],
      [message([text('read this'), file(pdfOf(MAX_A2A_FILE_BYTES + 1), 'application/pdf')]), 'RequestMalformedError', new RegExp(`parts\\[1\\] is ${MAX_A2A_FILE_BYTES + 1} bytes; a file may be at most ${MAX_A2A_FILE_BYTES} bytes`)],
      [message([text('read this'), file(Buffer.alloc(0), 'image/png')]), 'RequestMalformedError', /parts\[1\]: a file part needs its bytes/],
      [message([file(PNG, '')]), 'RequestMalformedError', /parts\[0\]: a file part needs its mediaType/],
      // Each under 128 KiB stays inline, and thirteen of them would not fit in the turn's history.
      [message(Array.from({ length: 13 }, () => file(pdfOf(120 * 1024), 'application/pdf'))), 'RequestMalformedError', /hold 2129920 base64 characters together; at most 1500000 fit/],
    ];
    for (const [sent, name, words] of cases) {
      const error = await served.alice.sendMessage({ tenant: '', message: sent, configuration: undefined, metadata: undefined }).then(() => undefined, (caught: unknown) => caught as Error);
      expect(error?.name).toBe(name);
      expect(error?.message).toMatch(words);
      await expect(served.context.turnpike.client.workflow.getHandle(taskIdFor('viewer', 'alice', sent.messageId)).describe()).rejects.toThrow(/not found/i);
    }
    expect(served.context.fake.requests).toEqual([]);
    expect(await storedKeys(served.context.store)).toEqual(keysBefore);
  });
});
