/**
 * turnpike's A2A endpoint driven from another language: Google's Python `a2a-sdk` (PyPI, pinned in
 * scripts/a2a-python/requirements.txt, installed once into a cached virtual environment by
 * scripts/python-env.ts), run as its own process (test/support/a2a-python-client.py). It finds
 * the agent by its Agent Card, sends a message whose turn parks for approval, sees
 * `input-required`, approves on the same task with a data part, and reads the task to its end;
 * turnpike's own client then reads the same turn.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { ensurePythonEnvironment } from '../../scripts/python-env.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = path.join(ROOT, 'test', 'support', 'a2a-python-client.py');

let python: string;
let turnpike: TurnpikeHarness;
let served: ServedApi;

beforeAll(async () => {
  [python, turnpike] = await Promise.all([
    ensurePythonEnvironment({ name: 'a2a-python', what: 'the A2A Python client (a2a-sdk)', requirements: path.join(ROOT, 'scripts', 'a2a-python', 'requirements.txt'), imports: ['a2a.client', 'a2a.types', 'httpx'] }),
    startTurnpike({ tools: testTools }),
  ]);
  served = await serveApi(turnpike, {
    tokens: parseTokenMap('alice-token:alice'),
    a2a: { agents: { desk: { description: 'Acts on orders', model: { provider: 'scripted', model: 'demo' }, tools: ['guarded_action'] } } },
  });
}, 600_000);
afterAll(async () => {
  await served?.api.close();
  await turnpike?.stop();
});

describe('the A2A endpoint from Python (a2a-sdk)', () => {
  it('a Python agent sends a task that waits for approval, approves it on the same task, and reads the answer', { timeout: 180_000 }, async () => {
    const { stdout } = await promisify(execFile)(python, [CLIENT, `${served.base}/api/a2a/desk/`, 'alice-token', use('guarded_action', { target: 'from-python', count: 1 })], { timeout: 150_000 });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as { taskId: string; approvalId: string | null; states: string[]; text: string };
    expect(seen.states[0]).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(seen.states.at(-1)).toBe('TASK_STATE_COMPLETED');
    expect(seen.approvalId).toMatch(/^apr_/);
    expect(seen.text).toContain('"guarded":"from-python"');
    // The task was the turn: approved once, by the Python agent's caller, and run once.
    const result = await served.client.turnResult(seen.taskId);
    expect(result.status).toBe('completed');
    expect(result.decisions).toEqual([expect.objectContaining({ approvalId: seen.approvalId, approver: 'alice', reason: 'approved from Python', outcome: 'approved' })]);
    expect(executionsOf(seen.taskId)).toHaveLength(1);
  });
});
