/** A new A2A task's message as turnpike's user message content (api/a2a/a2a-parts.ts). */
import type { Message, Part } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { messageContent } from '../../api/a2a/a2a-parts.js';

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const data = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });
const raw = (bytes: Buffer, mediaType: string, filename = ''): Part => ({ content: { $case: 'raw', value: bytes }, metadata: undefined, filename, mediaType });
const message = (parts: Part[]) => ({ messageId: 'm', parts }) as unknown as Message;

describe('messageContent', () => {
  it('keeps a message of text and data a string, as before files were taken', () => {
    expect(messageContent(message([text('look up'), data({ order: 7 })]))).toBe('look up\n{"order":7}');
  });

  it('keeps files in the order sent, joining the text and data around them', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    const pdf = Buffer.from('%PDF-1.7\n%%EOF\n');
    expect(messageContent(message([text('compare'), data(1), raw(png, 'IMAGE/PNG; x=1', 'a.png'), text('with'), raw(pdf, 'application/pdf', 'b.pdf')]))).toEqual([
      { type: 'text', text: 'compare\n1' },
      { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: png.toString('base64') } },
      { type: 'text', text: 'with' },
      { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: pdf.toString('base64') }, filename: 'b.pdf' },
    ]);
  });

  it('takes a file without text, and refuses a message with neither', () => {
    expect(messageContent(message([raw(Buffer.from('%PDF'), 'application/pdf')]))).toEqual([{ type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: Buffer.from('%PDF').toString('base64') } }]);
    expect(() => messageContent(message([text(' ')]))).toThrow('The message has no text and no file');
  });

  it('refuses a document name over 255 characters', () => {
    expect(() => messageContent(message([raw(Buffer.from('%PDF'), 'application/pdf', 'x'.repeat(256))]))).toThrow('parts[0].filename is 256 characters long; at most 255 are allowed');
  });
});
