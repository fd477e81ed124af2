/**
 * How the HTTP API answers: a result with its status, or `{ error: { type, message } }` with the
 * status its type has in `REJECTION_TYPES`. A turn or a conversation that does not exist and one
 * the caller may not read get the same answer.
 */
import type { FastifyReply } from 'fastify';
import { TurnpikeNotFoundError, TurnpikeRejectedError, TurnpikeUnavailableError } from '../client/errors.js';
import { REJECTION_TYPES, type RejectionType } from '../workflows/messages/rejection-types.js';

/** `{ error: { type, message } }` with the type's status, unless the cause had a more precise one (413, 415). */
export function sendError(reply: FastifyReply, type: RejectionType, message: string, status: number = REJECTION_TYPES[type].httpStatus) {
  return reply.status(status).send({ error: { type, message } });
}

/** Maps the client's typed errors to HTTP statuses; anything else is a 500. */
export async function answer<T>(reply: FastifyReply, work: () => Promise<T>, status = 200) {
  try {
    return reply.status(status).send(await work());
  } catch (error) {
    if (error instanceof TurnpikeNotFoundError) return sendError(reply, 'NotFound', error.message);
    if (error instanceof TurnpikeUnavailableError) return sendUnavailable(reply, error);
    if (error instanceof TurnpikeRejectedError) return sendError(reply, error.type, error.message);
    throw error;
  }
}

/**
 * Temporal could not take or answer the request in time, for a reason that passes (client/transient-wait.ts):
 * 503 `Unavailable` with `Retry-After`, from `answer` and from the API's error handler alike (a
 * rights check that could not be read is not a 404).
 */
export function sendUnavailable(reply: FastifyReply, error: TurnpikeUnavailableError) {
  return sendError(reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000))), 'Unavailable', error.message);
}

/** The same answer for a turn that does not exist and one the caller may not read. */
export const turnNotFound = (reply: FastifyReply, turnId: string) => sendError(reply, 'NotFound', `No turn ${JSON.stringify(turnId)} was found`);
export const conversationNotFound = (reply: FastifyReply, conversationId: string) => sendError(reply, 'NotFound', `No conversation ${JSON.stringify(conversationId)} was found`);
