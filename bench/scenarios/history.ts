/**
 * Figure 5a: history events and bytes per step. One turn each of 1, 2, 3 and 10 steps and one
 * approval turn (parked, approved, completed) per system; the marginal cost of a step is
 * (size at 10 steps − size at 1 step) / 9, and the cost of a park is the approval turn minus
 * the 2-step turn (the same activities without the wait).
 *
 * Then the same per model step over a conversation: turns of 1 and 3 steps after 10, 100 and
 * 1,000 prior messages (conversation.ts); per step = (3-step turn − 1-step turn) / 2, so the
 * start event, which carries the conversation once, is not counted as a step.
 *
 * Where `@temporalio/ai-sdk` is measured, turnpike with its openai provider and ai-sdk, both
 * against the fake OpenAI server, get the same figures except the park.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { BenchContext, Systems } from '../context.js';
import { buildConversation } from '../conversation.js';
import { waitFor } from '../pool.js';
import { ratio } from '../stats.js';
import type { SystemUnderTest } from '../system.js';
import { historySize, type HistorySize } from '../history-size.js';
import { parkTurns } from './park.js';

const STEPS = [1, 2, 3, 10];

export interface StepCost {
  events: number;
  protoBytes: number;
  jsonBytes: number;
}

export interface HistorySide {
  bySteps: Record<number, HistorySize>;
  approvalTurn?: HistorySize;
  perStep: StepCost;
  perPark?: { events: number; protoBytes: number };
  /** The floor only: one park with the search attributes and expiry timer of turnpike's contract. */
  contractPark?: { events: number; protoBytes: number };
}

/** One system's history over a conversation of `messages` prior messages. */
export interface ConversationHistory {
  messages: number;
  oneStep: HistorySize;
  threeSteps: HistorySize;
  /** (3-step turn − 1-step turn) / 2. */
  perStep: StepCost;
}

export interface HistoryFigures {
  turnpike: HistorySide;
  floor: HistorySide;
  ratio: { eventsPerStep: number; bytesPerStep: number; eventsPerPark: number };
  /** Per model step at each conversation length, by system name. */
  byConversation: Record<string, ConversationHistory[]>;
  /** turnpike (openai provider) and ai-sdk; ratios turnpike / ai-sdk. */
  aiSdk?: { turnpike: HistorySide; aiSdk: HistorySide; ratio: { eventsPerStep: number; bytesPerStep: number } };
}

const perStepBetween = (more: HistorySize, fewer: HistorySize, steps: number): StepCost => ({
  events: (more.events - fewer.events) / steps,
  protoBytes: (more.protoBytes - fewer.protoBytes) / steps,
  jsonBytes: (more.jsonBytes - fewer.jsonBytes) / steps,
});

async function completedTurn(system: SystemUnderTest, steps: number, history?: Parameters<SystemUnderTest['startTurn']>[1]): Promise<HistorySize> {
  const handle = await system.startTurn(steps, history);
  await system.finishTurn(handle, steps);
  return historySize(handle);
}

async function measureSide(context: BenchContext, system: SystemUnderTest, park: boolean): Promise<HistorySide> {
  const bySteps: Record<number, HistorySize> = {};
  for (const steps of STEPS) bySteps[steps] = await completedTurn(system, steps);
  const side: HistorySide = { bySteps, perStep: perStepBetween(bySteps[10], bySteps[1], 9) };
  if (!park) return side;
  return { ...side, ...(await measurePark(context, system, bySteps[2]!)) };
}

/**
 * One turn that parks once and is approved, against a 2-step turn without the park (`twoStep`):
 * the events and bytes the park added.
 */
async function measurePark(
  context: BenchContext,
  system: SystemUnderTest,
  twoStep: HistorySize,
  start: () => Promise<WorkflowHandle> = () => system.startParkedTurn(),
): Promise<Pick<HistorySide, 'approvalTurn' | 'perPark'>> {
  // Wait for the park the way the capacity figure does (the worker's model-step count, then an
  // idle worker) and only then ask for the approval id, so the query's workflow task, if any,
  // does not fall among the events the park is measured by.
  const [parked] = (await parkTurns(context, system, 1, start)).handles;
  const approvalId = await waitFor(`${system.name} turn to park`, () => system.approvalIdOf(parked!), 30_000, 100);
  await system.approve(parked!, approvalId);
  await system.finishTurn(parked!, 2);
  const approvalTurn = await historySize(parked!);
  return { approvalTurn, perPark: { events: approvalTurn.events - twoStep.events, protoBytes: approvalTurn.protoBytes - twoStep.protoBytes } };
}

async function measureConversation(system: SystemUnderTest, lengths: number[]): Promise<ConversationHistory[]> {
  const rows: ConversationHistory[] = [];
  for (const messages of lengths) {
    const history = buildConversation(messages);
    const oneStep = await completedTurn(system, 1, history);
    const threeSteps = await completedTurn(system, 3, history);
    rows.push({ messages, oneStep, threeSteps, perStep: perStepBetween(threeSteps, oneStep, 2) });
  }
  return rows;
}

export async function measureHistory(context: BenchContext, systems: Systems): Promise<HistoryFigures> {
  const turnpike = await measureSide(context, systems.turnpike, true);
  const floor = await measureSide(context, systems.floor, true);
  floor.contractPark = (await measurePark(context, systems.floor, floor.bySteps[2]!, () => systems.floor.startParkedTurn({ contractPark: true }))).perPark;
  const figures: HistoryFigures = {
    turnpike,
    floor,
    ratio: {
      eventsPerStep: ratio(turnpike.perStep.events, floor.perStep.events),
      bytesPerStep: ratio(turnpike.perStep.protoBytes, floor.perStep.protoBytes),
      eventsPerPark: ratio(turnpike.perPark!.events, floor.perPark!.events),
    },
    byConversation: {},
  };
  if (systems.aiSdk) {
    const openai = await measureSide(context, systems.aiSdk.turnpike, false);
    const aiSdk = await measureSide(context, systems.aiSdk.aiSdk, false);
    figures.aiSdk = {
      turnpike: openai,
      aiSdk,
      ratio: { eventsPerStep: ratio(openai.perStep.events, aiSdk.perStep.events), bytesPerStep: ratio(openai.perStep.protoBytes, aiSdk.perStep.protoBytes) },
    };
  }
  for (const system of [...systems.both, ...(systems.aiSdk?.both ?? [])]) {
    figures.byConversation[system.name] = await measureConversation(system, context.options.conversationLengths);
    context.log(`  history: ${system.name} over ${context.options.conversationLengths.join(' / ')} prior messages done`);
  }
  return figures;
}
