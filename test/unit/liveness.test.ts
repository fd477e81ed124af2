import { describe, expect, it } from 'vitest';
import type { State } from '@temporalio/worker';
import { livenessOf, STOP_MARGIN_MS } from '../../worker/liveness.js';

describe("a worker process's liveness (/healthz)", () => {
  const follow = (graceMs: number) => {
    const clock = { state: 'INITIALIZED' as State, now: 1_000 };
    const liveness = livenessOf(() => clock.state, graceMs, () => clock.now);
    return { clock, check: () => liveness.check() };
  };

  it('is alive while starting and running', () => {
    const { clock, check } = follow(30_000);
    expect(check()).toEqual({ alive: true, state: 'INITIALIZED' });
    clock.state = 'RUNNING';
    clock.now += 86_400_000;
    expect(check()).toEqual({ alive: true, state: 'RUNNING' });
  });

  it('stays alive while a shutdown takes no longer than its grace time and the margin', () => {
    const { clock, check } = follow(30_000);
    clock.state = 'RUNNING';
    check();
    clock.state = 'DRAINING';
    clock.now = 5_000;
    expect(check()).toEqual({ alive: true, state: 'DRAINING', stoppingSince: 5_000 });
    clock.state = 'STOPPING';
    clock.now = 5_000 + 30_000 + STOP_MARGIN_MS;
    expect(check()).toEqual({ alive: true, state: 'STOPPING', stoppingSince: 5_000 });
  });

  it('is not alive once a worker has been draining for longer than that', () => {
    const { clock, check } = follow(10_000);
    clock.state = 'DRAINING';
    clock.now = 2_000;
    check();
    clock.now = 2_000 + 10_000 + STOP_MARGIN_MS + 1;
    expect(check()).toEqual({ alive: false, state: 'DRAINING', stoppingSince: 2_000 });
  });

  it('is not alive once the worker failed', () => {
    const { clock, check } = follow(30_000);
    clock.state = 'FAILED';
    expect(check().alive).toBe(false);
  });
});
