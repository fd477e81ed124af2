/**
 * The worker's own variables read by `createWorker` (worker/create-worker.ts): the workflow tasks
 * it takes at once.
 */
import { describe, expect, it } from 'vitest';
import { workflowTaskSlotsFromEnvironment } from '../../worker/create-worker.js';

describe('TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS', () => {
  it("is the SDK's default when unset, and the number when set", () => {
    expect(workflowTaskSlotsFromEnvironment({})).toBeUndefined();
    expect(workflowTaskSlotsFromEnvironment({ TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS: '' })).toBeUndefined();
    expect(workflowTaskSlotsFromEnvironment({ TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS: '4' })).toBe(4);
  });

  it.each(['1', '0', '2.5', 'many', '-3'])('refuses %s with the variable named', (value) => {
    expect(() => workflowTaskSlotsFromEnvironment({ TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS: value })).toThrow(`TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS must be a whole number of at least 2 (got "${value}")`);
  });
});
