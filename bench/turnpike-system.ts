/**
 * turnpike as a system under test: `agentTurn` turns with the benchmark's tools and the
 * `scripted` model, or (`turnpike-openai`, for the comparison with `@temporalio/ai-sdk`) its
 * `openai` provider against the fake OpenAI server, which answers as the scripted model does, or
 * (`turnpike-ai-sdk`) an AI SDK model the worker registered, against the same server.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { AGENT_TURN_WORKFLOW, approveToolCallUpdate, turnStateQuery } from '../workflows/messages/definitions.js';
import type { agentTurn } from '../workflows/index.js';
import type { AgentTurnInput, AgentTurnResult, Message, ModelSettings, PendingToolCall } from '../workflows/types/index.js';
import { PARKED_PROMPT, scriptedPrompt } from './bench-tools.js';
import { approvalRequest, nextWorkflowId, type SystemUnderTest } from './system.js';
import type { WorkerHandle } from './worker-handle.js';

export const SCRIPTED_MODEL: ModelSettings = { provider: 'scripted', model: 'demo' };

export function turnInput(prompt: string, history: Message[] = [], model: ModelSettings = SCRIPTED_MODEL): AgentTurnInput {
  return { model: { ...model }, messages: [...history, { role: 'user', content: prompt }] };
}

export class TurnpikeSystem implements SystemUnderTest {
  constructor(
    private readonly client: Client,
    readonly taskQueue: string,
    readonly worker: WorkerHandle,
    readonly name: 'turnpike' | 'turnpike-openai' | 'turnpike-ai-sdk' = 'turnpike',
    private readonly model: ModelSettings = SCRIPTED_MODEL,
  ) {}

  /** Starts `agentTurn` with any input; the payload scenario passes long conversations. */
  start(input: AgentTurnInput, what: string): Promise<WorkflowHandle<typeof agentTurn>> {
    return this.client.workflow.start<typeof agentTurn>(AGENT_TURN_WORKFLOW, {
      taskQueue: this.taskQueue,
      workflowId: nextWorkflowId(this.name, what),
      args: [input],
    });
  }

  startTurn(steps: number, history: Message[] = []): Promise<WorkflowHandle> {
    return this.start(turnInput(scriptedPrompt(steps), history, this.model), `turn${steps}`);
  }

  async finishTurn(handle: WorkflowHandle, steps: number): Promise<void> {
    const result = (await handle.result()) as AgentTurnResult;
    if (result.status !== 'completed' || result.steps !== steps || result.toolCalls.some((call) => call.outcome !== 'executed' && call.outcome !== 'approved')) {
      throw new Error(`${this.name} turn ${handle.workflowId} did not complete as scripted: ${JSON.stringify({ status: result.status, steps: result.steps, expected: steps, toolCalls: result.toolCalls })}`);
    }
  }

  startParkedTurn(): Promise<WorkflowHandle> {
    return this.start(turnInput(PARKED_PROMPT, [], this.model), 'parked');
  }

  /** The turn's first pending call per `turnState`, or `undefined` while it has none (or has not run yet). */
  async pendingCall(handle: WorkflowHandle): Promise<PendingToolCall | undefined> {
    try {
      return (await handle.query(turnStateQuery)).pending[0];
    } catch {
      // The first workflow task may not have run yet.
      return undefined;
    }
  }

  async approvalIdOf(handle: WorkflowHandle): Promise<string | undefined> {
    return (await this.pendingCall(handle))?.approvalId;
  }

  async approve(handle: WorkflowHandle, approvalId: string): Promise<void> {
    await handle.executeUpdate(approveToolCallUpdate, { args: [approvalRequest(approvalId)] });
  }
}
