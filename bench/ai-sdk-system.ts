/**
 * `@temporalio/ai-sdk` as a system under test: `aiSdkTurn` workflows (ai-sdk-workflows.ts) whose
 * model calls go through `@ai-sdk/openai` to the fake OpenAI server, which answers the same
 * prompt with the same tool calls as turnpike's scripted model.
 *
 * Parking is not measured for it: the AI SDK's tool approval ends `generateText` with an
 * approval request, and waiting for the answer (an update, a condition, a second
 * `generateText`) is the user's own workflow code, not the integration's.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ModelMessage } from 'ai';
import type { Message } from '../workflows/types/index.js';
import { AI_SDK_WORKFLOW, type AiSdkTurnInput, type AiSdkTurnResult } from './ai-sdk-definitions.js';
import { scriptedPrompt } from './bench-tools.js';
import { FAKE_OPENAI_MODEL } from './fake-openai-settings.js';
import { nextWorkflowId, type SystemUnderTest } from './system.js';
import type { WorkerHandle } from './worker-handle.js';

/**
 * turnpike's messages as AI SDK `ModelMessage`s. The shapes match part for part except tool
 * results, whose output the AI SDK wraps as `{ type: 'json', value }`.
 */
export function toModelMessages(messages: Message[]): ModelMessage[] {
  return messages.map((message): ModelMessage => {
    if (message.role !== 'tool') return message as ModelMessage;
    return {
      role: 'tool',
      content: message.content.map((part) => ({
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output: part.isError ? { type: 'error-json', value: part.output as never } : { type: 'json', value: part.output as never },
      })),
    };
  });
}

export class AiSdkSystem implements SystemUnderTest {
  readonly name = 'ai-sdk' as const;

  constructor(
    private readonly client: Client,
    readonly taskQueue: string,
    readonly worker: WorkerHandle,
  ) {}

  startTurn(steps: number, history: Message[] = []): Promise<WorkflowHandle> {
    const input: AiSdkTurnInput = { model: FAKE_OPENAI_MODEL, messages: toModelMessages([...history, { role: 'user', content: scriptedPrompt(steps) }]) };
    return this.client.workflow.start(AI_SDK_WORKFLOW, { taskQueue: this.taskQueue, workflowId: nextWorkflowId(this.name, `turn${steps}`), args: [input] });
  }

  async finishTurn(handle: WorkflowHandle, steps: number): Promise<void> {
    const result = (await handle.result()) as AiSdkTurnResult;
    if (result.steps !== steps || result.toolResults !== steps - 1 || result.finishReason !== 'stop' || !result.text.startsWith(steps > 1 ? 'Done.' : 'ok')) {
      throw new Error(`ai-sdk turn ${handle.workflowId} did not complete as scripted: ${JSON.stringify({ ...result, expected: steps })}`);
    }
  }

  startParkedTurn(): Promise<WorkflowHandle> {
    return Promise.reject(new Error('ai-sdk: parked turns are not part of the comparison'));
  }

  approvalIdOf(): Promise<string | undefined> {
    return Promise.reject(new Error('ai-sdk: parked turns are not part of the comparison'));
  }

  approve(): Promise<void> {
    return Promise.reject(new Error('ai-sdk: parked turns are not part of the comparison'));
  }
}
