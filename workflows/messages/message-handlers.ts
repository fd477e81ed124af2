/**
 * Registers a turnpike workflow's update and signal handlers on raw arguments (`raw-messages.ts`):
 * each message is decoded, then its field sizes are checked (`field-limits.ts`), before the
 * handler's own checks see it.
 *
 * - An update that does not decode is rejected as `UndecodablePayload`; one over a size limit as
 *   `PayloadTooLarge`. Both say what is wrong and never quote the message.
 * - A signal that does not decode, or is over a limit, is dropped and logged (`Ignored an
 *   undecodable approveToolCall signal`, `Ignored an invalid approveToolCall signal`), as is one
 *   its handler refuses: nothing a signal carries can fail the workflow task.
 *
 * Update handlers decode again without checking: Temporal does not run validators on replay, and
 * an accepted update's payload decodes the same way every time.
 */
import * as wf from '@temporalio/workflow';
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { messageProblem } from './field-limits.js';
import { decodeArgument, rawSignal, rawUpdate } from './raw-messages.js';
import { rejection } from './rejection.js';

/** The decoded, size-checked argument of message `name`; throws the rejection its update is refused with. */
export function readMessage(name: string, raw: unknown): unknown {
  const decoded = decodeArgument(raw);
  if (!decoded.ok) throw rejection('UndecodablePayload', `${name} could not be decoded: ${decoded.reason}`);
  const problem = messageProblem(name, decoded.value);
  if (problem) throw rejection('PayloadTooLarge', problem);
  return decoded.value;
}

/** The argument of an update its validator accepted (see the module comment). */
function acceptedMessage(name: string, raw: unknown): unknown {
  const decoded = decodeArgument(raw);
  if (!decoded.ok) throw rejection('UndecodablePayload', `${name} could not be decoded: ${decoded.reason}`);
  return decoded.value;
}

/**
 * `wf.setHandler(definition, handler, { validator })` on the raw argument: the validator gets the
 * decoded, size-checked message; it and the handler are typed as the definition says, and check
 * the message's shape themselves, as before.
 */
export function setUpdateHandler<Ret, Arg>(
  definition: UpdateDefinition<Ret, [Arg]>,
  handler: (request: Arg) => Ret | Promise<Ret>,
  { validator }: { validator: (request: Arg) => void },
): void {
  const { name } = definition;
  wf.setHandler(rawUpdate<Ret>(name), (raw) => handler(acceptedMessage(name, raw) as Arg), {
    validator: (raw) => validator(readMessage(name, raw) as Arg),
  });
}

/** `wf.setHandler(definition, handler)` on the raw argument; whatever the handler throws is logged, never rethrown. */
export function setSignalHandler<Arg>(definition: SignalDefinition<[Arg]>, handler: (request: Arg) => void): void {
  const { name } = definition;
  wf.setHandler(rawSignal(name), (raw) => {
    const decoded = decodeArgument(raw);
    if (!decoded.ok) {
      wf.log.warn(`Ignored an undecodable ${name} signal`, { reason: decoded.reason });
      return;
    }
    try {
      const problem = messageProblem(name, decoded.value);
      if (problem) throw rejection('PayloadTooLarge', problem);
      handler(decoded.value as Arg);
    } catch (error) {
      wf.log.warn(`Ignored an invalid ${name} signal`, { error: error instanceof Error ? error.message : String(error) });
    }
  });
}

/**
 * `wf.setHandler(definition, handler)` for a query whose argument has limits (`callContext`): one
 * over them fails the query naming the field and its size, before the handler could quote it. A
 * query asked while a workflow task runs is answered inside that task's completion.
 */
export function setQueryHandler<Ret, Arg>(definition: QueryDefinition<Ret, [Arg]>, handler: (request: Arg) => Ret): void {
  wf.setHandler(definition, (request: Arg) => {
    const problem = messageProblem(definition.name, request);
    if (problem) throw new Error(problem);
    return handler(request);
  });
}
