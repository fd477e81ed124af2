import { ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { isTransient } from '../../client/event-subscription.js';

/** A query failure as the client throws it: a ServiceError whose cause is the gRPC error. */
function failed(code: number, details: string): ServiceError {
  return new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });
}

describe('a stream reader asks again after a query failure a later query may not meet', () => {
  it.each([
    [1, 'context canceled', 'the server cancelled it: the worker it was given to shut down'],
    [4, 'deadline exceeded', 'no worker answered in time'],
    [8, 'query buffer is full', 'a busy workflow'],
    [14, 'connection refused', 'the server was briefly unavailable'],
  ])('gRPC %i (%s): %s', (code, details) => {
    expect(isTransient(failed(code, details))).toBe(true);
  });

  it('but not after a refusal, an unknown query or a workflow that does not exist', () => {
    expect(isTransient(failed(3, 'invalid argument'))).toBe(false);
    expect(isTransient(failed(9, 'failed precondition'))).toBe(false);
    expect(isTransient(new WorkflowNotFoundError('gone', 'turn-1', undefined))).toBe(false);
  });
});
