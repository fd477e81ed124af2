/**
 * A scripted model whose steps are plain data: what the model says at each step of a turn.
 *
 *   script([
 *     [call('lookup_order', { orderId: '1001' })],                 // step 1: one call
 *     [call('issue_refund', { orderId: '1001', amount: 250 })],    // step 2, after its result
 *     text('Refunded $250.'),                                      // step 3: the answer
 *   ])
 *
 * A step is one part or several said together (parallel calls, text beside them). The turn runs
 * it as it runs any model (`provider: 'scripted'`), in the worker of the test's process; each
 * step is checked against what the real APIs refuse (see activities/providers/script.ts).
 */
import { registerScript, type ScriptPart, type ScriptStep } from '../activities/providers/script.js';
import type { ModelSettings } from '../workflows/types/index.js';

export type { ScriptPart, ScriptStep };

/** A registered script: pass it as a turn's `model`, or its `model` where settings are wanted. */
export interface Script {
  readonly kind: 'turnpike-script';
  /** The model settings a turn names it by: `{ provider: 'scripted', model: 'script:<id>' }`. */
  readonly model: ModelSettings;
  readonly steps: readonly ScriptStep[];
}

/** A model that says `steps`, one per model call of a turn (after its latest user message). */
export function script(steps: readonly ScriptStep[]): Script {
  return { kind: 'turnpike-script', model: { provider: 'scripted', model: registerScript(steps) }, steps };
}

/** A tool call; its id is `call_<step>_<n>` unless given (ids must be unique in the conversation). */
export function call(toolName: string, input: unknown = {}, options: { toolCallId?: string } = {}): ScriptPart {
  return { type: 'tool-call', toolName, input, ...(options.toolCallId !== undefined ? { toolCallId: options.toolCallId } : {}) };
}

/** Text the model says; a step of text alone ends the turn. */
export function text(value: string): ScriptPart {
  return { type: 'text', text: value };
}

export function isScript(value: unknown): value is Script {
  return typeof value === 'object' && value !== null && (value as Script).kind === 'turnpike-script';
}
