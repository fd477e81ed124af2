/**
 * What the content-store tests share: a harness over a folder store of its own, PDF-shaped files
 * no two tests share, the PDFs and tool results a recorded provider request carried, a history's
 * stored size and a store's keys.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { Tool } from '../../activities/tools.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { ContentStore } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import type { Json, RecordedRequest } from '../fake-provider/server.js';
import { useFakeProviders } from './fake-providers.js';
import { startTurnpike, type TurnpikeHarness } from './turnpike-harness.js';

const { temporal } = proto;

export const MB = 1024 * 1024;

export const sha = (bytes: string | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** A PDF-shaped file of about `bytes` bytes (a header, random bytes, a trailer). */
export function pdfOf(bytes: number): Buffer {
  const head = Buffer.from('%PDF-1.7\n');
  const tail = Buffer.from('\n%%EOF\n');
  return Buffer.concat([head, randomBytes(Math.max(0, bytes - head.length - tail.length)), tail]);
}

/** The SHA-256 of every inline PDF in a recorded request, in order: Chat Completions `file` parts or Anthropic `document` blocks. */
export function pdfsSent(request: RecordedRequest): string[] {
  const found: string[] = [];
  const visit = (value: Json): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    const record = value as Record<string, Json>;
    const file = record.file as Record<string, Json> | undefined;
    if (record.type === 'file' && typeof file?.file_data === 'string') found.push(sha(Buffer.from(file.file_data.replace(/^data:application\/pdf;base64,/, ''), 'base64')));
    const source = record.source as Record<string, Json> | undefined;
    if (record.type === 'document' && source?.type === 'base64') found.push(sha(Buffer.from(String(source.data), 'base64')));
    Object.values(record).forEach(visit);
  };
  visit(request.body);
  return found;
}

/** The content of the request's tool result, as text: a Chat Completions `tool` message or an Anthropic `tool_result` block. */
export function toolResultSent(request: RecordedRequest): string | undefined {
  const messages = (request.body as { messages: Array<{ role: string; content: Json }> }).messages;
  const tool = messages.find((message) => message.role === 'tool');
  if (tool) return String(tool.content);
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    const block = (message.content as Array<Record<string, Json>>).find((part) => part.type === 'tool_result');
    if (!block) continue;
    return typeof block.content === 'string' ? block.content : (block.content as Array<{ text: string }>).map((part) => part.text).join('');
  }
  return undefined;
}

/** The size of a workflow's whole history as Temporal stores it (protobuf). */
export async function historyBytes(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** Every key a store holds. */
export async function storedKeys(store: ContentStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list()) keys.push(object.key);
  return keys;
}

/** A turnpike harness and a TurnpikeClient over one folder store of their own, with the fake providers. */
export interface ContentTurnpike {
  fake: Awaited<ReturnType<typeof useFakeProviders>>;
  turnpike: TurnpikeHarness;
  client: TurnpikeClient;
  store: FileContentStore;
  folder: string;
  stop(): Promise<void>;
}

export async function startContentTurnpike(tools: readonly Tool[]): Promise<ContentTurnpike> {
  const folder = mkdtempSync(path.join(tmpdir(), 'turnpike-content-'));
  const store = new FileContentStore(folder);
  const fake = await useFakeProviders();
  const turnpike = await startTurnpike({ tools, contentStore: store });
  const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, contentStore: store });
  return {
    fake,
    turnpike,
    client,
    store,
    folder,
    async stop() {
      await turnpike.stop();
      await fake.restore();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
