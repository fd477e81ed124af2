/**
 * What a remote A2A task means for the call that follows it: its answer (the artifacts as text),
 * its question (`input-required`), a failure the model reads, or "still working". Pure: the
 * call's activity (`a2a-remote-call.ts`) turns each verdict into a result or a failure.
 */
import type { Message, Part, Task } from '@a2a-js/sdk';

/** The task states of A2A 1.0 (the SDK's `TaskState` enum, by number: the SDK is loaded lazily). */
export const A2A_STATE = {
  SUBMITTED: 1,
  WORKING: 2,
  COMPLETED: 3,
  FAILED: 4,
  CANCELED: 5,
  INPUT_REQUIRED: 6,
  REJECTED: 7,
  AUTH_REQUIRED: 8,
} as const;

const STATE_NAMES: Record<number, string> = {
  1: 'submitted',
  2: 'working',
  3: 'completed',
  4: 'failed',
  5: 'canceled',
  6: 'input-required',
  7: 'rejected',
  8: 'auth-required',
};

export type TaskVerdict =
  | { kind: 'answer'; output: string }
  | { kind: 'question'; output: string }
  | { kind: 'ended'; error: string }
  | { kind: 'working'; state: string };

/** A remote answer that is not what A2A says it must be: the call fails, and nothing is retried. */
export class MalformedRemoteAnswer extends Error {
  override name = 'MalformedRemoteAnswer';
}

/**
 * The task as the remote answered it, checked: an object with a non-empty id (the one asked for,
 * when one was) and a known state. Anything else is a forged or broken answer.
 */
export function checkedTask(answer: unknown, expectedId: string | undefined): Task {
  const task = answer as Partial<Task> | undefined;
  if (typeof task !== 'object' || task === null) throw new MalformedRemoteAnswer('the remote agent answered with no task');
  if (typeof task.id !== 'string' || task.id === '' || task.id.length > 1_000) throw new MalformedRemoteAnswer('the remote agent answered with a task without a valid id');
  if (expectedId !== undefined && task.id !== expectedId) {
    throw new MalformedRemoteAnswer(`the remote agent answered with task ${JSON.stringify(task.id)} where task ${JSON.stringify(expectedId)} was asked for`);
  }
  const state = task.status?.state as number | undefined;
  if (typeof state !== 'number' || !(state in STATE_NAMES)) {
    throw new MalformedRemoteAnswer(`the remote agent answered task ${task.id} with no known state (${JSON.stringify(state ?? null)})`);
  }
  if (task.artifacts !== undefined && !Array.isArray(task.artifacts)) throw new MalformedRemoteAnswer(`the artifacts of task ${task.id} are not a list`);
  return task as Task;
}

export function stateName(task: Task): string {
  return STATE_NAMES[task.status?.state as number] ?? 'unknown';
}

/** What the call makes of the task, as the model will read it. */
export function verdictOf(task: Task, toolName: string): TaskVerdict {
  const state = task.status?.state as number;
  const said = task.status?.message ? textOf(task.status.message.parts) : '';
  switch (state) {
    case A2A_STATE.COMPLETED: {
      const parts = (task.artifacts ?? []).flatMap((artifact) => (Array.isArray(artifact?.parts) ? artifact.parts : []));
      const output = textOf(parts) || said;
      return { kind: 'answer', output: output || `The remote agent completed task ${task.id} with no artifact.` };
    }
    case A2A_STATE.INPUT_REQUIRED:
      return {
        kind: 'question',
        output:
          `The remote agent needs more input to go on with its task ${task.id}: ${said || '(it did not say what)'}\n` +
          `To answer it, call ${toolName} again with {"taskId": "${task.id}", "message": "<the answer>"}.`,
      };
    case A2A_STATE.SUBMITTED:
    case A2A_STATE.WORKING:
      return { kind: 'working', state: stateName(task) };
    case A2A_STATE.AUTH_REQUIRED:
      return { kind: 'ended', error: `The remote agent's task ${task.id} needs authentication, which this tool cannot give${said ? `: ${said}` : ''}.` };
    default:
      return { kind: 'ended', error: `The remote agent's task ${task.id} ended ${stateName(task)}${said ? `: ${said}` : '.'}` };
  }
}

/** What the remote said in the task's status (its question, for `input-required`), or a fallback. */
export function statusText(task: Task): string {
  return (task.status?.message ? textOf(task.status.message.parts) : '') || `The remote agent needs more input to go on with its task ${task.id} (it did not say what).`;
}

/** Text parts as they are, data parts as JSON, files by name and where they are (bytes are not inlined). */
export function textOf(parts: readonly Part[] | undefined): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .map((part) => {
      const content = part?.content;
      if (!content) return '';
      if (content.$case === 'text') return typeof content.value === 'string' ? content.value : '';
      if (content.$case === 'data') return JSON.stringify(content.value ?? null);
      const label = [part.filename, part.mediaType].filter(Boolean).join(', ');
      if (content.$case === 'url') return `[file${label ? ` ${label}` : ''}: ${content.value}]`;
      if (content.$case === 'raw') return `[file${label ? ` ${label}` : ''}: ${content.value?.length ?? 0} bytes, not included]`;
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

/** A direct reply (a `Message`, no task): its text is the answer. */
export function messageAnswer(message: Message): string {
  return textOf(message.parts) || 'The remote agent answered with an empty message.';
}
