import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineClientTool, defineTool, ToolDefinitionError } from '../../activities/tools.js';
import { parseScriptedRequests, scriptedModelStep } from '../../activities/providers/scripted.js';
import { modelFromEnvironment } from '../../cli/default-model.js';
import { canonicalJson, inputHash } from '../../workflows/messages/input-hash.js';

const inputSchema = z.object({ city: z.string() });

describe('tool definitions', () => {
  it('rejects a server tool without execute, pointing at defineClientTool', () => {
    expect(() => defineTool({ name: 'weather', description: 'x', inputSchema } as never)).toThrow(/needs an execute function.*defineClientTool/);
  });

  it('rejects a client tool with execute or an approval policy', () => {
    expect(() => defineClientTool({ name: 'ask', description: 'x', inputSchema, execute: async () => ({}) } as never)).toThrow(/cannot have execute/);
    expect(() => defineClientTool({ name: 'ask', description: 'x', inputSchema, approval: true } as never)).toThrow(/cannot have approval/);
  });

  it('rejects names the model APIs refuse, missing descriptions and non-object schemas', () => {
    expect(() => defineTool({ name: 'has space', description: 'x', inputSchema, execute: async () => ({}) })).toThrow(ToolDefinitionError);
    expect(() => defineTool({ name: 'ok', description: '', inputSchema, execute: async () => ({}) })).toThrow(/description is required/);
    expect(() => defineTool({ name: 'ok', description: 'x', inputSchema: z.string(), execute: async () => ({}) })).toThrow(/must describe an object/);
    expect(() => defineTool({ name: 'ok', description: 'x', inputSchema, approvers: ['a'], execute: async () => ({}) })).toThrow(/no approval policy/);
  });

  it('marks each kind explicitly', () => {
    expect(defineTool({ name: 'a', description: 'x', inputSchema, execute: async () => ({}) }).kind).toBe('server');
    expect(defineClientTool({ name: 'b', description: 'x', inputSchema }).kind).toBe('client');
  });
});

describe('input hash', () => {
  it('ignores key order and undefined fields, and changes with any value', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 2, x: 1 }], c: undefined })).toBe('{"a":[{"x":1,"y":2}],"b":1}');
    expect(inputHash({ a: 1, b: 2 })).toBe(inputHash({ b: 2, a: 1 }));
    expect(inputHash({ a: 1 })).not.toBe(inputHash({ a: 2 }));
    expect(inputHash({ amount: 250 })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('the scripted demo model', () => {
  it('reads parallel requests joined by "and" and sequential steps joined by "then"', () => {
    expect(parseScriptedRequests('look up order 1001 and refund $250 on order 1001 then ask me "ok?"')).toEqual([
      [
        { toolName: 'lookup_order', input: { orderId: '1001' } },
        { toolName: 'issue_refund', input: { orderId: '1001', amount: 250 } },
      ],
      [{ toolName: 'ask_user', input: { question: 'ok?' } }],
    ]);
  });

  it('passes JSON through with "use", and keeps malformed JSON as raw text', () => {
    expect(parseScriptedRequests('use any_tool with {"a": "b and c"}')).toEqual([[{ toolName: 'any_tool', input: { a: 'b and c' } }]]);
    expect(parseScriptedRequests('use any_tool with {"a": 1')).toEqual([[{ toolName: 'any_tool', input: '{"a": 1' }]]);
  });

  it('calls tools step by step, then answers from the results', () => {
    const user = { role: 'user' as const, content: 'look up order 1001' };
    const first = scriptedModelStep({ model: { provider: 'scripted', model: 'demo' }, messages: [user], tools: [] });
    expect(first.finishReason).toBe('tool-calls');
    const call = first.message.content[0];
    expect(call).toMatchObject({ type: 'tool-call', toolName: 'lookup_order' });
    const second = scriptedModelStep({
      model: { provider: 'scripted', model: 'demo' },
      messages: [user, first.message, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1_1', toolName: 'lookup_order', output: { item: 'Espresso machine' } }] }],
      tools: [],
    });
    expect(second).toMatchObject({ finishReason: 'stop', message: { content: [{ type: 'text', text: expect.stringContaining('Espresso machine') }] } });
  });
});

describe("npm start's demo model", () => {
  it('uses a real provider when its key is set, and TURNPIKE_PROVIDER / TURNPIKE_MODEL when given', () => {
    expect(modelFromEnvironment({})).toEqual({ provider: 'scripted', model: 'demo' });
    expect(modelFromEnvironment({ OPENAI_API_KEY: 'k' })).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(modelFromEnvironment({ ANTHROPIC_API_KEY: 'k' })).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-6' });
    expect(modelFromEnvironment({ OPENAI_API_KEY: 'k', TURNPIKE_PROVIDER: 'anthropic', TURNPIKE_MODEL: 'claude-x' })).toEqual({ provider: 'anthropic', model: 'claude-x' });
    expect(modelFromEnvironment({ OPENAI_API_KEY: 'k', TURNPIKE_PROVIDER: 'openai-responses' })).toEqual({ provider: 'openai-responses', model: 'gpt-5-mini' });
    expect(() => modelFromEnvironment({ TURNPIKE_PROVIDER: 'gemini' })).toThrow(/must be openai, openai-responses, anthropic or scripted/);
  });
});

describe('the CLI hint for answering an MCP server\'s question', () => {
  it('puts a placeholder for each requested field, by type and format, and offers decline', async () => {
    const { answerTemplate, resolveHint } = await import('../../cli/format.js');
    const schema = { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' }, age: { type: 'integer' }, agree: { type: 'boolean' } } };
    expect(answerTemplate(schema)).toBe('{"action":"accept","content":{"name":"<string>","email":"<string: email>","age":<integer>,"agree":<boolean>}}');
    expect(answerTemplate(undefined)).toBe('{"action":"accept","content":{}}');
    const call = {
      kind: 'elicitation' as const,
      elicitationId: 'eli_1',
      toolCallId: 'call_1',
      toolName: 'crm__signup',
      input: {},
      inputHash: 'sha256:x',
      requestedAt: '2026-11-23T10:00:00.000Z',
      expiresAt: '2026-11-24T10:00:00.000Z',
      message: 'Who are you?',
      requestedSchema: schema,
    };
    expect(resolveHint('turn-1', call)).toBe(`turnpike submit turn-1 call_1 '${answerTemplate(schema)}'   (or '{"action":"decline"}')`);
    expect(resolveHint('turn-1', { ...call, kind: 'client-tool' })).toBe("turnpike submit turn-1 call_1 '<json>'");
  });
});
