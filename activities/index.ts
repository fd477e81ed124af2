/**
 * The activities of turnpike's workflows, bound to one worker's tool set. Every side effect
 * of a turn happens here: model calls, approval policies, tool executions.
 */
import { ApplicationFailure } from '@temporalio/common';
import { executeTool } from './execute-tool.js';
import { callModel } from './model.js';
import { prepareToolCalls, type PrepareToolCallsInput } from './prepare-tool-calls.js';
import { createToolRegistry } from './tool-registry.js';
import type { Tool } from './tools.js';
import type { ExecuteToolInput, ModelStepInput, ToolSpec } from '../workflows/types.js';

export interface CreateActivitiesOptions {
  tools: readonly Tool[];
}

export function createActivities({ tools }: CreateActivitiesOptions) {
  const registry = createToolRegistry(tools);
  return {
    /** Data-only specs of the tools offered this turn (local activity). */
    async describeTools({ names }: { names?: string[] }): Promise<ToolSpec[]> {
      return registry.specs(names);
    },
    /** Validation and approval policy for every call of a step (local activity). */
    async prepareToolCalls(input: PrepareToolCallsInput) {
      return prepareToolCalls(registry, input);
    },
    async executeTool(input: ExecuteToolInput) {
      return executeTool(registry, input);
    },
    async callModel(input: ModelStepInput) {
      if (!input?.model?.provider) throw ApplicationFailure.nonRetryable('model.provider is required', 'InvalidModelSettings');
      return callModel(input);
    },
  };
}

export type TurnpikeActivities = ReturnType<typeof createActivities>;
