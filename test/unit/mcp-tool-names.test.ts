import { describe, expect, it } from 'vitest';
import { checkMcpServers, defaultMcpApproval, mcpToolOptions } from '../../activities/mcp/mcp-servers.js';
import { mcpServerOf, mcpToolNames } from '../../activities/mcp/mcp-tool-names.js';

const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe('mcpToolNames', () => {
  it('prefixes each tool with its server and keeps names the providers accept as they are', () => {
    expect([...mcpToolNames('everything', ['echo', 'get-sum']).values()]).toEqual(['everything__echo', 'everything__get-sum']);
  });

  it('replaces characters the providers refuse, and hashes names that would collide, whatever the listing order', () => {
    const forward = mcpToolNames('fs', ['files.read', 'files_read', 'list']);
    const backward = mcpToolNames('fs', ['list', 'files_read', 'files.read']);
    expect(forward.get('list')).toBe('fs__list');
    expect(forward.get('files.read')).not.toBe(forward.get('files_read'));
    expect(forward.get('files.read')).toMatch(/^fs__files_read_[0-9a-f]{8}$/);
    for (const name of ['files.read', 'files_read', 'list']) expect(backward.get(name)).toBe(forward.get(name));
  });

  it('cuts names over 64 characters and keeps them distinct and stable', () => {
    const long = 'a'.repeat(100);
    const names = mcpToolNames('server', [long, `${long}b`, 'ünïcode/tool']);
    for (const name of names.values()) expect(name).toMatch(PROVIDER_NAME);
    expect(new Set(names.values()).size).toBe(3);
    expect(mcpToolNames('server', [long]).get(long)).toBe(names.get(long));
  });

  it('finds the server of a prefixed name', () => {
    expect(mcpServerOf('everything__get-sum')).toBe('everything');
    expect(mcpServerOf('lookup_order')).toBeUndefined();
    expect(mcpServerOf('__x')).toBeUndefined();
  });
});

describe('defaultMcpApproval', () => {
  it('lets read-only and non-destructive tools run, and parks every other one, as MCP defines the hints', () => {
    expect(defaultMcpApproval({ readOnlyHint: true })).toBe('never');
    expect(defaultMcpApproval({ readOnlyHint: false, destructiveHint: false })).toBe('never');
    expect(defaultMcpApproval({ destructiveHint: true })).toBe('always');
    expect(defaultMcpApproval({ readOnlyHint: false })).toBe('always');
    expect(defaultMcpApproval(undefined)).toBe('always');
  });
});

describe('mcp server options', () => {
  it('takes a tool option over the server one', () => {
    const policy = () => 'approved' as const;
    const options = mcpToolOptions({ command: 'x', approval: true, approvers: ['ops'], tools: { echo: { approval: policy } } }, 'echo');
    expect(options).toMatchObject({ approval: policy, approvers: ['ops'] });
    expect(mcpToolOptions({ command: 'x', approval: true }, 'other').approval).toBe(true);
  });

  it('refuses bad declarations at start-up', () => {
    expect(() => checkMcpServers({ my_server: { command: 'x' } })).toThrow(/server name/);
    expect(() => checkMcpServers({ s: { command: 'x', url: 'http://h' } as never })).toThrow(/either command/);
    expect(() => checkMcpServers({ s: { url: 'not a url' } })).toThrow();
    expect(() => checkMcpServers({ s: { command: 'x', tools: { t: { approval: 'yes' as never } } } })).toThrow(/approval must be/);
    expect(() => checkMcpServers({ s: { command: 'x', maxConnections: 0 } })).toThrow(/maxConnections must be a whole number of at least 1/);
    expect(() => checkMcpServers({ s: { command: 'x', maxConnections: 1.5 } })).toThrow(/maxConnections/);
    expect(() => checkMcpServers({ s: { command: 'x', maxConnections: 1 } })).not.toThrow();
  });
});

describe('outputOf (what the model gets from an MCP result)', () => {
  it('prefers structured content, then joined text, else the content blocks; an error result keeps its text', async () => {
    const { outputOf } = await import('../../activities/mcp/mcp-tool-source.js');
    expect(outputOf({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } })).toEqual({ n: 1 });
    expect(outputOf({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    const image = { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' };
    expect(outputOf({ content: [{ type: 'text', text: 'see' }, image] })).toEqual([{ type: 'text', text: 'see' }, image]);
    expect(outputOf({ content: [{ type: 'text', text: 'offline' }], structuredContent: { n: 1 }, isError: true })).toBe('offline');
  });
});
