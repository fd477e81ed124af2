/**
 * Figure 5a: history events and bytes per step. One turn each of 1, 2, 3 and 10 steps and one
 * approval turn (parked, approved, completed) per system; the marginal cost of a step is
 * (size at 10 steps − size at 1 step) / 9, and the cost of a park is the approval turn minus
 * the 2-step turn (the same activities without the wait).
 */
import type { BenchContext, Systems } from '../context.js';
import { waitFor } from '../pool.js';
import { ratio } from '../stats.js';
import type { SystemUnderTest } from '../system.js';
import { historySize, type HistorySize } from '../history-size.js';

const STEPS = [1, 2, 3, 10];

export interface HistorySide {
  bySteps: Record<number, HistorySize>;
  approvalTurn: HistorySize;
  perStep: { events: number; protoBytes: number; jsonBytes: number };
  perPark: { events: number; protoBytes: number };
}

export interface HistoryFigures {
  turnpike: HistorySide;
  floor: HistorySide;
  ratio: { eventsPerStep: number; bytesPerStep: number; eventsPerPark: number };
}

async function measureSide(system: SystemUnderTest): Promise<HistorySide> {
  const bySteps: Record<number, HistorySize> = {};
  for (const steps of STEPS) {
    const handle = await system.startTurn(steps);
    await system.finishTurn(handle, steps);
    bySteps[steps] = await historySize(handle);
  }
  const parked = await system.startParkedTurn();
  const approvalId = await waitFor(`${system.name} turn to park`, () => system.approvalIdOf(parked), 30_000, 100);
  await system.approve(parked, approvalId);
  await system.finishTurn(parked, 2);
  const approvalTurn = await historySize(parked);
  const first = bySteps[1];
  const last = bySteps[10];
  return {
    bySteps,
    approvalTurn,
    perStep: {
      events: (last.events - first.events) / 9,
      protoBytes: (last.protoBytes - first.protoBytes) / 9,
      jsonBytes: (last.jsonBytes - first.jsonBytes) / 9,
    },
    perPark: { events: approvalTurn.events - bySteps[2].events, protoBytes: approvalTurn.protoBytes - bySteps[2].protoBytes },
  };
}

export async function measureHistory(_context: BenchContext, systems: Systems): Promise<HistoryFigures> {
  const turnpike = await measureSide(systems.turnpike);
  const floor = await measureSide(systems.floor);
  return {
    turnpike,
    floor,
    ratio: {
      eventsPerStep: ratio(turnpike.perStep.events, floor.perStep.events),
      bytesPerStep: ratio(turnpike.perStep.protoBytes, floor.perStep.protoBytes),
      eventsPerPark: ratio(turnpike.perPark.events, floor.perPark.events),
    },
  };
}
