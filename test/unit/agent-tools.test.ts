/** Defining agent tools, and their registration with a worker's tools: refused at once when inconsistent. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { createToolRegistry } from '../../activities/tool-registry.js';
import { defineTool, ToolDefinitionError } from '../../activities/tools.js';

const model = { provider: 'openai', model: 'gpt-4.1-mini' } as const;
const lookup = defineTool({ name: 'lookup', description: 'Looks up.', inputSchema: z.object({ id: z.string() }), execute: ({ id }) => ({ id }) });

describe('defineAgentTool', () => {
  it('refuses an agent tool that lists itself, has no model, or has an execute function', () => {
    expect(() => defineAgentTool({ name: 'loop', description: 'Calls itself.', inputSchema: z.object({}), agent: { model, tools: ['loop'] } })).toThrow(
      new ToolDefinitionError('defineAgentTool "loop": agent.tools lists the tool itself; a sub-agent that calls itself would never end'),
    );
    expect(() => defineAgentTool({ name: 'nomodel', description: 'No model.', inputSchema: z.object({}), agent: {} as never })).toThrow(/agent.model must be/);
    const withExecute = { name: 'exec', description: 'Runs.', inputSchema: z.object({}), agent: { model }, execute: () => 1 };
    expect(() => defineAgentTool(withExecute)).toThrow(/has no execute function/);
    expect(() => defineAgentTool({ name: 'steps', description: 'Steps.', inputSchema: z.object({}), agent: { model, maxSteps: 0 } })).toThrow(/maxSteps/);
  });

  it('describes the sub-agent to the turn as data: kind agent, the worker’s depth limit, whether a prompt function writes its message', () => {
    const research = defineAgentTool({
      name: 'research',
      description: 'Researches.',
      inputSchema: z.object({ topic: z.string() }),
      agent: { model, system: 'Be brief.', tools: ['lookup'], output: { schema: z.object({ answer: z.string() }) }, maxSteps: 3 },
      prompt: ({ topic }) => `Research ${topic}`,
      approval: true,
    });
    const [spec] = createToolRegistry([lookup, research], 2).specs(['research']);
    expect(spec).toMatchObject({
      name: 'research',
      kind: 'agent',
      approval: 'always',
      agent: { model, system: 'Be brief.', tools: ['lookup'], maxSteps: 3, prompt: true, maxDepth: 2, output: { schema: { type: 'object', required: ['answer'] } } },
    });
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
  });

  it('refuses a sub-agent offered a tool the worker lacks, and a depth limit that is not a positive integer', () => {
    const research = defineAgentTool({ name: 'research', description: 'Researches.', inputSchema: z.object({}), agent: { model, tools: ['lookup', 'missing', 'docs__search'] } });
    expect(() => createToolRegistry([lookup, research])).toThrow(new ToolDefinitionError('agent tool "research" offers its sub-agent tools this worker does not have: missing'));
    expect(() => createToolRegistry([lookup], 0)).toThrow(/maxAgentDepth must be a positive integer/);
  });
});
