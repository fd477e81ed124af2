/** `npm run api`'s A2A and MCP agents from the environment: taken when well formed, refused with the reason otherwise. */
import { describe, expect, it } from 'vitest';
import { a2aOptionsFromEnvironment } from '../../api/a2a/a2a-agents.js';
import { mcpOptionsFromEnvironment } from '../../api/mcp/mcp-agents.js';

const desk = { description: 'Orders', model: { provider: 'scripted', model: 'demo' }, tools: ['lookup_order'] };

describe('a2aOptionsFromEnvironment', () => {
  it('reads the agents and the public URL, and nothing when unset', () => {
    expect(a2aOptionsFromEnvironment({})).toBeUndefined();
    expect(a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }), TURNPIKE_A2A_PUBLIC_URL: 'https://turnpike.example.com' })).toEqual({
      agents: { desk },
      publicUrl: 'https://turnpike.example.com',
    });
  });

  it('refuses malformed agents with the reason', () => {
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: '{desk' })).toThrow(/must be JSON/);
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ 'no/slash': desk }) })).toThrow(/TURNPIKE_A2A_AGENTS/);
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk: { ...desk, model: { provider: 'nope', model: 'x' } } }) })).toThrow(/provider/);
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk: { ...desk, colour: 'red' } }) })).toThrow(/colour/);
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: '{}' })).toThrow(/at least one agent/);
  });

  it('reads the private push receivers allowed from TURNPIKE_A2A_PUSH_ALLOW, and refuses a bad entry as the API starts', () => {
    expect(a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }), TURNPIKE_A2A_PUSH_ALLOW: '10.0.0.0/8,hooks.internal' })?.pushAllow).toEqual(['10.0.0.0/8', 'hooks.internal']);
    expect(a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }) })).not.toHaveProperty('pushAllow');
    expect(() => a2aOptionsFromEnvironment({ TURNPIKE_A2A_AGENTS: JSON.stringify({ desk }), TURNPIKE_A2A_PUSH_ALLOW: '10.0.0.0/99' })).toThrow(/a2a\.pushAllow: "10\.0\.0\.0\/99"/);
  });
});

describe('mcpOptionsFromEnvironment', () => {
  it('reads the agents from TURNPIKE_MCP_AGENTS, and nothing when unset', () => {
    expect(mcpOptionsFromEnvironment({})).toBeUndefined();
    expect(mcpOptionsFromEnvironment({ TURNPIKE_MCP_AGENTS: JSON.stringify({ desk }) })).toEqual({ agents: { desk } });
  });

  it('refuses malformed agents with the variable and the reason', () => {
    expect(() => mcpOptionsFromEnvironment({ TURNPIKE_MCP_AGENTS: '{desk' })).toThrow(/TURNPIKE_MCP_AGENTS must be JSON/);
    expect(() => mcpOptionsFromEnvironment({ TURNPIKE_MCP_AGENTS: JSON.stringify({ desk: { ...desk, description: '' } }) })).toThrow(/TURNPIKE_MCP_AGENTS/);
    expect(() => mcpOptionsFromEnvironment({ TURNPIKE_MCP_AGENTS: '{}' })).toThrow(/buildApi mcp: name at least one agent/);
  });
});
