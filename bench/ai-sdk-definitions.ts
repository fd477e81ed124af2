/**
 * The `@temporalio/ai-sdk` system's workflow name and messages, importable by the benchmark's
 * client side without loading the AI SDK (types only).
 */
import type { ModelMessage } from 'ai';

export const AI_SDK_WORKFLOW = 'aiSdkTurn';

export interface AiSdkTurnInput {
  /** Model id for `@ai-sdk/openai`'s Chat Completions model (the fake OpenAI server answers any). */
  model: string;
  /** The conversation, ending with the new user message, as AI SDK `ModelMessage`s. */
  messages: ModelMessage[];
  /** `stopWhen: stepCountIs(maxSteps)`; turnpike's default is 10, and so is this. */
  maxSteps?: number;
}

export interface AiSdkTurnResult {
  steps: number;
  /** Tool results over all steps. */
  toolResults: number;
  finishReason: string;
  text: string;
}
