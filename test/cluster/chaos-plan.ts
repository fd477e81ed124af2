/**
 * What the cluster chaos test does, in its two forms, chosen by TURNPIKE_CLUSTER_CHAOS:
 *
 * - `short` (the default; `npm test`, CI): 100 turns, one worker SIGKILLed, the Temporal server
 *   SIGKILLed and started again once, PostgreSQL restarted once.
 * - `long` (`npm run test:chaos`): 1,000 turns, 20 worker SIGKILLs spread over the run (a
 *   replacement worker started after each), 3 server restarts, 1 PostgreSQL restart.
 *
 * Every turn parks twice on an approval-gated charge, so there are 2 × turns charges, less the
 * denied ones. Each event fires once that many charge attempts have begun: spread evenly over
 * the approved charges, so every event lands while charges run and decisions are being sent.
 */
export type ChaosForm = 'short' | 'long';

export type ChaosEventKind = 'worker-kill' | 'server-restart' | 'postgres-restart';

export interface ChaosEvent {
  kind: ChaosEventKind;
  /** Fires once this many charge attempts (of the chaos turns) have begun. */
  afterAttempts: number;
}

export interface ChaosPlan {
  form: ChaosForm;
  turns: number;
  /** Worker processes at all times: a killed one is replaced. */
  workers: number;
  /** Every denyEvery-th turn's second charge is denied: a denied charge must never run. */
  denyEvery: number;
  events: ChaosEvent[];
  /** How long the turns may take to park, and then to finish. */
  parkTimeoutMs: number;
  finishTimeoutMs: number;
  /** The test's own limit. */
  testTimeoutMs: number;
}

export function chaosForm(value = process.env.TURNPIKE_CLUSTER_CHAOS): ChaosForm {
  if (value === undefined || value === '' || value === 'short') return 'short';
  if (value === 'long') return 'long';
  throw new Error(`TURNPIKE_CLUSTER_CHAOS must be "short" (the default) or "long", not ${JSON.stringify(value)}`);
}

/** The events in firing order: `kinds[i]` fires after (i + 1) / (kinds.length + 1) of the approved charges. */
function spread(kinds: ChaosEventKind[], approvedCharges: number): ChaosEvent[] {
  return kinds.map((kind, index) => ({ kind, afterAttempts: Math.round(((index + 1) / (kinds.length + 1)) * approvedCharges) }));
}

export function chaosPlan(form: ChaosForm): ChaosPlan {
  const denyEvery = 10;
  if (form === 'short') {
    const turns = 100;
    return {
      form,
      turns,
      workers: 3,
      denyEvery,
      events: spread(['worker-kill', 'server-restart', 'postgres-restart'], approvedCharges(turns, denyEvery)),
      parkTimeoutMs: 180_000,
      finishTimeoutMs: 15 * 60_000,
      testTimeoutMs: 20 * 60_000,
    };
  }
  const turns = 1_000;
  // 24 events: the 6th, 13th and 20th restart the server, the 10th PostgreSQL, the other 20 kill a worker.
  const kinds = Array.from({ length: 24 }, (_, slot): ChaosEventKind =>
    [5, 12, 19].includes(slot) ? 'server-restart' : slot === 9 ? 'postgres-restart' : 'worker-kill',
  );
  return {
    form,
    turns,
    workers: 3,
    denyEvery,
    events: spread(kinds, approvedCharges(turns, denyEvery)),
    parkTimeoutMs: 15 * 60_000,
    finishTimeoutMs: 90 * 60_000,
    testTimeoutMs: 120 * 60_000,
  };
}

export function approvedCharges(turns: number, denyEvery: number): number {
  return turns * 2 - Math.floor(turns / denyEvery);
}

/** The charge that turn `index` runs second is denied on every denyEvery-th turn. */
export function isDenied(index: number, secondCharge: boolean, denyEvery: number): boolean {
  return secondCharge && index % denyEvery === denyEvery - 1;
}
