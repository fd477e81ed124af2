import type { Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { runModelStep, type StepTools } from '../../activities/model-step.js';
import { ToolSetCache } from '../../activities/tool-set-cache.js';
import { TranscriptCache } from '../../activities/transcript-cache.js';
import { toolSetHash } from '../../workflows/turn/tool-set.js';
import type { FinishReason, ModelStepInput, ModelStepRequest, ModelStepResult, ToolCallDisposition, ToolSpec } from '../../workflows/types/index.js';

const spec = (name: string): ToolSpec => ({ name, description: `The ${name} tool.`, inputSchema: { type: 'object' }, kind: 'server', approval: 'never' });
/** An activity context outside a workflow: steps here carry their messages inline. */
const context = { info: { workflowExecution: undefined } } as unknown as Context;
const caches = () => ({ transcripts: new TranscriptCache(), toolSets: new ToolSetCache() });

function stepTools(specs: ToolSpec[]) {
  const prepared: string[][] = [];
  const tools: StepTools = {
    describe: async (names) => ({ specs: names ? specs.filter((tool) => names.includes(tool.name)) : specs }),
    prepare: async (calls) => {
      prepared.push(calls.map((call) => call.toolCallId));
      return calls.map((call): ToolCallDisposition => ({ kind: 'execute', input: call.input }));
    },
  };
  return { tools, prepared };
}

/** A model that calls each named tool once, and records what it was offered. */
function model(calls: string[], finishReason: FinishReason = 'tool-calls') {
  const offered: string[][] = [];
  const call = async (input: ModelStepInput): Promise<ModelStepResult> => {
    offered.push(input.tools.map((tool) => tool.name));
    return {
      message: { role: 'assistant', content: calls.map((toolName, index) => ({ type: 'tool-call', toolCallId: `call_${index}`, toolName, input: { index } })) },
      finishReason,
      usage: { inputTokens: 1, outputTokens: 1 },
    };
  };
  return { call, offered };
}

const request: ModelStepRequest = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: 'hi' }] };

describe('a turn\'s model step', () => {
  it('describes the tools on the first step, offers them, keeps them by hash and returns them', async () => {
    const { tools } = stepTools([spec('a'), spec('b'), spec('c')]);
    const { call, offered } = model([]);
    const stepCaches = caches();
    const result = await runModelStep({ ...request, describeTools: { names: ['a', 'c'] } }, tools, stepCaches, context, call);
    expect(offered).toEqual([['a', 'c']]);
    expect(result.described?.specs.map((tool) => tool.name)).toEqual(['a', 'c']);
    const hash = toolSetHash(result.described!.specs.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
    // A later step that names them by hash alone finds them without asking the turn.
    await runModelStep({ ...request, toolsHash: hash }, tools, stepCaches, context, call);
    expect(offered[1]).toEqual(['a', 'c']);
    expect(result.dispositions).toBeUndefined();
  });

  it('decides each call of an offered tool, in call order, and none of a tool it did not offer', async () => {
    const { tools, prepared } = stepTools([spec('a'), spec('b')]);
    const { call } = model(['b', 'ghost', 'a']);
    const result = await runModelStep({ ...request, describeTools: {} }, tools, caches(), context, call);
    expect(prepared).toEqual([['call_0', 'call_2']]);
    expect(result.dispositions).toEqual([{ kind: 'execute', input: { index: 0 } }, null, { kind: 'execute', input: { index: 2 } }]);
  });

  it('decides nothing for a step the model cut off: its calls never run', async () => {
    const { tools, prepared } = stepTools([spec('a')]);
    const { call } = model(['a'], 'length');
    const result = await runModelStep({ ...request, describeTools: {} }, tools, caches(), context, call);
    expect(prepared).toEqual([]);
    expect(result.dispositions).toBeUndefined();
  });
});
