import { ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { TurnpikeUnavailableError } from '../../client/errors.js';
import { isTransient } from '../../client/transient-errors.js';
import { waitOutTransient } from '../../client/transient-wait.js';

/** A failure as the client throws it: a ServiceError whose cause is the gRPC error. */
function failed(code: number, details: string): ServiceError {
  return new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });
}

describe('failures that pass, as the server words them (temporalio/temporal v1.29)', () => {
  it.each([
    [9, 'Unable to query workflow due to Workflow Task in failed state.'],
    [9, 'Unable to perform workflow execution update due to Workflow Task in failed state.'],
    [9, 'Unable to perform workflow execution update due to unexpected workflow task failure.'],
    [9, 'no poller seen for task queue recently, worker may be down'],
    [14, 'workflow update was aborted'],
    [8, 'namespace rate limit exceeded'],
  ])('gRPC %i: %s', (code, details) => {
    expect(isTransient(failed(code, details))).toBe(true);
  });

  it('but not other preconditions, a closed workflow or a missing one', () => {
    expect(isTransient(failed(9, 'failed precondition'))).toBe(false);
    expect(isTransient(failed(5, 'workflow update was aborted by closing workflow'))).toBe(false);
    expect(isTransient(new WorkflowNotFoundError('gone', 'turn-1', undefined))).toBe(false);
  });
});

describe('waitOutTransient', () => {
  it('asks again after failures that pass and returns the answer', async () => {
    let attempts = 0;
    const answer = await waitOutTransient('a read', 10_000, async () => {
      if (++attempts < 3) throw failed(8, 'consistent query buffer is full');
      return 'answered';
    });
    expect([answer, attempts]).toEqual(['answered', 3]);
  });

  it('raises any other failure at once', async () => {
    let attempts = 0;
    const refused = new Error('InputHashMismatch');
    await expect(waitOutTransient('a decision', 10_000, async () => {
      attempts++;
      throw refused;
    })).rejects.toBe(refused);
    expect(attempts).toBe(1);
  });

  it('raises TurnpikeUnavailableError, retryable, once its patience is spent', async () => {
    const started = Date.now();
    const error = await waitOutTransient('the decision on approval a-1 of turn t-1', 600, async () => {
      throw failed(4, 'context deadline exceeded');
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeUnavailableError);
    const unavailable = error as TurnpikeUnavailableError;
    expect(unavailable.retryable).toBe(true);
    expect(unavailable.retryAfterMs).toBeGreaterThan(0);
    expect(unavailable.message).toMatch(/^Temporal could not take the decision on approval a-1 of turn t-1 within 1 s \(4 context deadline exceeded\)/);
    expect(isTransient(unavailable.cause)).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
