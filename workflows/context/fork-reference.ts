/**
 * The reference a fork starts with (`AgentTurnInput.forkOf`): the original's transcript through
 * step k, by length, chain hash and tool call ids. Pure: `forkTurn` (client/turn-fork.ts) and the
 * evaluation worker (activities/evaluation) read the transcript, this cuts and hashes it.
 */
import { toolCallIdsIn } from '../calls/tool-call-ids.js';
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from './transcript-hash.js';
import type { AgentTurnInput, ForkReference, Message } from '../types/index.js';

/** How much of the prefix's last user message a fork's reference carries (`ForkReference.userMessage`). */
const FORK_USER_MESSAGE_CHARS = 1_000;

/** The transcript up to the end of step `atStep`: before the model's answer of the next step. */
export function transcriptThroughStep(messages: readonly Message[], given: number, atStep: number): Message[] | undefined {
  let steps = 0;
  for (let index = given; index < messages.length; index++) {
    if (messages[index].role !== 'assistant') continue;
    if (steps === atStep) return messages.slice(0, index);
    steps++;
  }
  // Step k was the last: it is whole only if its tool calls have their results (the turn did not end on it).
  return steps === atStep && messages.at(-1)?.role === 'tool' ? [...messages] : undefined;
}

/**
 * The reference of a fork of `turnId` (its run `runId`, whose input is `input` and whose whole
 * transcript is `transcript`) after step `atStep`; undefined when it has no such step ending in
 * tool results.
 */
export function forkReferenceOf(turnId: string, runId: string, input: AgentTurnInput, transcript: readonly Message[], atStep: number): ForkReference | undefined {
  // A fork of a fork: its own steps count from the end of its prefix.
  const given = (input.forkOf?.prefixLength ?? 0) + input.messages.length;
  const messages = transcriptThroughStep(transcript, given, atStep);
  if (!messages) return undefined;
  const reference: ForkReference = {
    workflowId: turnId,
    runId,
    atStep,
    prefixLength: messages.length,
    prefixHash: extendTranscriptHash(TRANSCRIPT_HASH_START, messages).hash,
    toolCallIds: [...toolCallIdsIn(messages)],
  };
  const lastUser = messages.findLast((message) => message.role === 'user');
  // Cut, so a long user message is not copied into the fork after all.
  if (lastUser) reference.userMessage = (typeof lastUser.content === 'string' ? lastUser.content : lastUser.content.map((part) => (part.type === 'text' ? part.text : '')).join('')).slice(0, FORK_USER_MESSAGE_CHARS);
  return reference;
}
