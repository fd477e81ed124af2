/**
 * Images and documents in user messages: the turn-start checks (workflows/turn/binary-parts.ts), and
 * each provider's wire format through the real SDKs against the strict fakes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callAnthropic } from '../../activities/providers/anthropic.js';
import type { ProviderCallOptions } from '../../activities/providers/errors.js';
import { callOpenAI } from '../../activities/providers/openai.js';
import { callOpenAIResponses } from '../../activities/providers/openai-responses.js';
import { base64Bytes, binaryPartsProblem, MAX_INLINE_PART_BYTES, MAX_INLINE_TOTAL_BASE64_CHARS, MAX_STORED_PART_BYTES } from '../../workflows/turn/binary-parts.js';
import type { Message, ModelProvider, ModelStepInput, ModelStepResult, UserContentPart } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProvider, type FakeProviderServer } from '../fake-provider/server.js';

/** A 1×1 PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF_BASE64 = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n').toString('base64');

const image: UserContentPart = { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: PNG_BASE64 } };
const imageUrl: UserContentPart = { type: 'image', source: { type: 'url', url: 'https://example.com/receipt.jpg' }, detail: 'high' };
const pdf: UserContentPart = { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: PDF_BASE64 }, filename: 'invoice.pdf' };
const pdfUrl: UserContentPart = { type: 'document', source: { type: 'url', url: 'https://example.com/terms.pdf' } };

const userWith = (...parts: UserContentPart[]): Message => ({ role: 'user', content: [{ type: 'text', text: 'What do these show?' }, ...parts] });

describe('binaryPartsProblem', () => {
  it('accepts images and documents, inline and by URL, and messages without any', () => {
    expect(binaryPartsProblem([userWith(image, imageUrl, pdf, pdfUrl)], 'anthropic')).toBeUndefined();
    expect(binaryPartsProblem([userWith(image, imageUrl, pdf, pdfUrl)], 'openai-responses')).toBeUndefined();
    expect(binaryPartsProblem([{ role: 'user', content: 'plain' }], 'openai')).toBeUndefined();
  });

  it('refuses an inline part over the size limit, naming the part and the way out', () => {
    const data = 'A'.repeat(Math.ceil(((MAX_INLINE_PART_BYTES + 3) * 4) / 3 / 4) * 4);
    expect(base64Bytes(data)).toBeGreaterThan(MAX_INLINE_PART_BYTES);
    const problem = binaryPartsProblem([{ role: 'user', content: 'x' }, userWith({ type: 'image', source: { type: 'base64', mediaType: 'image/png', data } })], 'openai');
    expect(problem).toBe(`messages[1].content[1] is ${base64Bytes(data)} bytes; an inline image may be at most ${MAX_INLINE_PART_BYTES} bytes (it travels in workflow history). Larger files go by reference: TurnpikeClient and the HTTP API keep inline parts of 128 KiB or more in the content store (up to ${MAX_STORED_PART_BYTES} bytes each), or pass a URL`);
  });

  it('refuses inline parts that together exceed what fits in a turn', () => {
    const data = 'A'.repeat(1_000_000);
    const part: UserContentPart = { type: 'image', source: { type: 'base64', mediaType: 'image/png', data } };
    expect(binaryPartsProblem([userWith(part), userWith(part)], 'anthropic')).toContain(`at most ${MAX_INLINE_TOTAL_BASE64_CHARS} fit in a turn`);
  });

  it.each([
    ['an image type no provider takes', { type: 'image', source: { type: 'base64', mediaType: 'image/bmp', data: PNG_BASE64 } }, '.source.mediaType must be one of image/png, image/jpeg, image/gif, image/webp (got "image/bmp")'],
    ['data that is not base64', { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'not base64!' } }, '.source.data is not valid base64'],
    ['a data: URL as data', { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: `data:image/png;base64,${PNG_BASE64}` } }, '.source.data must be bare base64, without a "data:" prefix'],
    ['base64 without a media type', { type: 'image', source: { type: 'base64', data: PNG_BASE64 } }, '.source.mediaType is required for base64 data (one of image/png, image/jpeg, image/gif, image/webp)'],
    ['a file: URL', { type: 'image', source: { type: 'url', url: 'file:///etc/passwd' } }, '.source.url must be an http(s) URL'],
    ['a URL too long', { type: 'image', source: { type: 'url', url: `https://example.com/${'a'.repeat(3000)}` } }, '.source.url is 3020 characters long; at most 2048 are allowed'],
    ['a bare string as source', { type: 'image', source: PNG_BASE64 }, ".source must be { type: 'base64', mediaType, data }, { type: 'stored', ref, mediaType, bytes } or { type: 'url', url }"],
    ['a stored source with a malformed reference', { type: 'image', source: { type: 'stored', ref: 'sha256:abc', mediaType: 'image/png', bytes: 10 } }, '.source.ref must be "sha256:" and 64 lowercase hex digits'],
    ['a stored source over its limit', { type: 'document', source: { type: 'stored', ref: `sha256:${'a'.repeat(64)}`, mediaType: 'application/pdf', bytes: MAX_STORED_PART_BYTES + 1 } }, `.source is ${MAX_STORED_PART_BYTES + 1} bytes; a stored image or document may be at most ${MAX_STORED_PART_BYTES} bytes`],
    ['an unknown detail', { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: PNG_BASE64 }, detail: 'ultra' }, '.detail must be one of low, high, auto (got "ultra")'],
    ['a document that is not a PDF', { type: 'document', source: { type: 'base64', mediaType: 'text/html', data: PDF_BASE64 } }, '.source.mediaType must be one of application/pdf (got "text/html")'],
  ])('refuses %s, naming the part', (_label, part, message) => {
    expect(binaryPartsProblem([userWith(part as UserContentPart)], 'anthropic')).toBe(`messages[0].content[1]${message}`);
  });

  it('refuses a document URL for Chat Completions, which cannot fetch one, and images outside user messages', () => {
    expect(binaryPartsProblem([userWith(pdfUrl)], 'openai')).toContain('OpenAI Chat Completions takes documents inline only');
    const assistant = { role: 'assistant', content: [image] } as unknown as Message;
    expect(binaryPartsProblem([{ role: 'user', content: 'x' }, assistant], 'anthropic')).toBe('messages[1].content[0]: image parts may only appear in user messages');
  });
});

describe('images and documents on the wire', () => {
  let server: FakeProviderServer;
  beforeAll(async () => {
    server = await startFakeProviderServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => server.reset());

  const calls: Record<FakeProvider, { provider: ModelProvider; model: string; call: (input: ModelStepInput, options: ProviderCallOptions) => Promise<ModelStepResult>; options: () => ProviderCallOptions }> = {
    openai: { provider: 'openai', model: 'gpt-4.1-mini', call: callOpenAI, options: () => ({ apiKey: 'sk-test', baseURL: server.openaiBaseURL }) },
    'openai-responses': { provider: 'openai-responses', model: 'gpt-4.1-mini', call: callOpenAIResponses, options: () => ({ apiKey: 'sk-test', baseURL: server.openaiBaseURL }) },
    anthropic: { provider: 'anthropic', model: 'claude-sonnet-4-6', call: callAnthropic, options: () => ({ apiKey: 'sk-ant-test', baseURL: server.anthropicBaseURL }) },
  };

  async function send(provider: FakeProvider, parts: UserContentPart[]) {
    const { call, options, model, provider: modelProvider } = calls[provider];
    server.script(provider, [{ text: 'A receipt.' }]);
    const result = await call({ model: { provider: modelProvider, model }, messages: [userWith(...parts)], tools: [] }, options());
    expect(result.message.content).toEqual([{ type: 'text', text: 'A receipt.' }]);
    const request = server.requests.at(-1)!;
    expect(request.errors).toEqual([]);
    return request.body;
  }

  it('sends Chat Completions image_url parts (data URL and URL) and a file part', async () => {
    const body = await send('openai', [image, imageUrl, pdf]);
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'What do these show?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/receipt.jpg', detail: 'high' } },
      { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF_BASE64}`, filename: 'invoice.pdf' } },
    ]);
  });

  it('sends Responses input_image and input_file parts, inline and by URL', async () => {
    const body = await send('openai-responses', [image, imageUrl, pdf, pdfUrl]);
    expect(body.input[0].content).toEqual([
      { type: 'input_text', text: 'What do these show?' },
      { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${PNG_BASE64}` },
      { type: 'input_image', detail: 'high', image_url: 'https://example.com/receipt.jpg' },
      { type: 'input_file', file_data: `data:application/pdf;base64,${PDF_BASE64}`, filename: 'invoice.pdf' },
      { type: 'input_file', file_url: 'https://example.com/terms.pdf' },
    ]);
  });

  it('sends Anthropic image and document blocks, base64 and URL', async () => {
    const body = await send('anthropic', [image, imageUrl, pdf, pdfUrl]);
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'What do these show?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/receipt.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 }, title: 'invoice.pdf' },
      // The last block of the last user turn also carries the default prompt-caching breakpoint.
      { type: 'document', source: { type: 'url', url: 'https://example.com/terms.pdf' }, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('is refused by each fake, as by the API, when the image is not one it takes', async () => {
    const bmp: UserContentPart = { type: 'image', source: { type: 'base64', mediaType: 'image/bmp', data: PNG_BASE64 } };
    for (const provider of ['openai', 'openai-responses', 'anthropic'] as const) {
      const { call, options, model, provider: modelProvider } = calls[provider];
      await expect(call({ model: { provider: modelProvider, model }, messages: [userWith(bmp)], tools: [] }, options())).rejects.toThrow(/MIME type|media_type/);
      expect(server.requests.at(-1)!.status).toBe(400);
    }
  });

  it('is refused by the Anthropic fake past its 5 MB per-image limit', async () => {
    const big: UserContentPart = { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'A'.repeat(7_000_000) } };
    await expect(calls.anthropic.call({ model: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, messages: [userWith(big)], tools: [] }, calls.anthropic.options())).rejects.toThrow(
      'image exceeds 5 MB maximum',
    );
  });
});
