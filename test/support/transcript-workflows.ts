/**
 * A workflow that calls turnpike's `callModel` activity with a transcript by reference and
 * serves the `transcript` query itself, so a test can make it serve other messages than the
 * ones it hashed: what a corrupted or mismatched transcript looks like to the activity.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import { transcriptQuery } from '../../workflows/definitions.js';
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from '../../workflows/transcript-hash.js';
import type { Message, ModelStepResult } from '../../workflows/types.js';

const { callModel } = wf.proxyActivities<TurnpikeActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 },
});

export interface TranscriptStepInput {
  /** The transcript the step's reference is hashed over. */
  messages: Message[];
  /** What the `transcript` query serves. */
  served: Message[];
}

export async function transcriptStep({ messages, served }: TranscriptStepInput): Promise<ModelStepResult> {
  wf.setHandler(transcriptQuery, (request) => {
    const offset = request?.offset ?? 0;
    return { messages: served.slice(offset, offset + (request?.limit ?? served.length)), offset, total: served.length };
  });
  const { hash } = extendTranscriptHash(TRANSCRIPT_HASH_START, messages);
  return callModel({
    model: { provider: 'scripted', model: 'demo' },
    tools: [],
    transcript: { length: messages.length, hash, from: messages.length, added: [] },
  });
}
