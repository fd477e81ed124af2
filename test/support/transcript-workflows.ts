/**
 * A workflow that calls turnpike's `callModel` activity with a transcript (and, if given, its
 * tools) by reference and serves the `transcript` and `modelTools` queries itself, so a test can
 * make it serve other messages or tools than the ones it hashed: what a corrupted or mismatched
 * transcript or tool list looks like to the activity.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import { modelToolsQuery, transcriptQuery } from '../../workflows/messages/definitions.js';
import { toolSetHash } from '../../workflows/turn/tool-set.js';
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from '../../workflows/context/transcript-hash.js';
import type { Message, ModelSettings, ModelStepResult, ModelToolSpec } from '../../workflows/types/index.js';

const { callModel } = wf.proxyActivities<TurnpikeActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 },
});

export interface TranscriptStepInput {
  /** The transcript the step's reference is hashed over. */
  messages: Message[];
  /** What the `transcript` query serves. */
  served: Message[];
  /** Tools sent by their hash alone (none inline): the hash is of `hashed`; `modelTools` serves `served`. */
  tools?: { hashed: ModelToolSpec[]; served: ModelToolSpec[] };
  /** Default: the scripted model. */
  model?: ModelSettings;
}

export async function transcriptStep({ messages, served, tools, model }: TranscriptStepInput): Promise<ModelStepResult> {
  wf.setHandler(modelToolsQuery, () => tools?.served ?? []);
  wf.setHandler(transcriptQuery, (request) => {
    const offset = request?.offset ?? 0;
    return { messages: served.slice(offset, offset + (request?.limit ?? served.length)), offset, total: served.length };
  });
  const { hash } = extendTranscriptHash(TRANSCRIPT_HASH_START, messages);
  return callModel({
    model: model ?? { provider: 'scripted', model: 'demo' },
    ...(tools ? { toolsHash: toolSetHash(tools.hashed) } : { tools: [] }),
    transcript: { length: messages.length, hash, from: messages.length, added: [] },
  });
}
