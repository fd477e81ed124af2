/**
 * The report's rows for figures with no floor to compare with: a large image, streaming, readers
 * of a parked turn, one long streamed step, and the ai-sdk provider. Each compares turnpike with itself.
 */
import type { ReportRow } from './results.js';
import type { AiSdkModelFigures } from './scenarios/ai-sdk-model.js';
import type { LargeImageFigures } from './scenarios/large-image.js';
import type { LongStreamFigures } from './scenarios/long-stream.js';
import type { ReadersFigures } from './scenarios/readers.js';
import type { ClosedTurnFigures } from './scenarios/closed-turn.js';
import type { LatencyPercentiles, StreamingFigures, StreamingHistory } from './scenarios/streaming.js';
import { bytes, ms, pair, x } from './row-format.js';

/**
 * The large-image figure has no floor: the same turn without the image → with it, both in the
 * turnpike column, with ÷ without in brackets (report.ts also prints them side by side).
 */
export function largeImageRows(image: LargeImageFigures): ReportRow[] {
  const mib = (image.imageBytes / 2 ** 20).toFixed(0);
  const turn = `${image.steps}-step openai turn without → with a ${mib} MiB PNG by reference`;
  const none = { floor: '—', ratio: '—', target: '—', met: null } as const;
  const row = (what: string, without: string, withImage: string, ratio: number): ReportRow => ({ figure: `${what} (${turn})`, turnpike: `${without} → ${withImage} (${x(ratio)})`, ...none });
  return [
    row(`Turn start → result (p50, n=${image.with.turn.n})`, ms(image.without.turn.median), ms(image.with.turn.median), image.ratio.turn),
    row(`Model step, callModel scheduled → completed (p50, n=${image.with.modelStep.n})`, ms(image.without.modelStep.median), ms(image.with.modelStep.median), image.ratio.modelStep),
    row(`History per turn (median; events / protobuf bytes)`, `${image.without.history.events} ev / ${bytes(image.without.history.protoBytes)}`, `${image.with.history.events} ev / ${bytes(image.with.history.protoBytes)}`, image.ratio.historyProtoBytes),
  ];
}

/**
 * Streaming has no floor: its figures compare a streamed turn with the same turn unstreamed
 * (`model.stream: false`), both in the turnpike column, the unstreamed one first.
 */
export function streamingRows(streaming: StreamingFigures): ReportRow[] {
  const size = (side: StreamingHistory) => `${side.events} ev / ${bytes(side.protoBytes)}`;
  const added = (cost: { events: number; protoBytes: number }) => `+${cost.events} ev / +${bytes(cost.protoBytes)}`;
  const latencies = (value: LatencyPercentiles) => `${ms(value.p50)} / ${ms(value.p95)}`;
  const turn = `${streaming.steps}-step openai turn, median of ${streaming.turns}`;
  const none = { floor: '—', ratio: '—', target: '—', met: null } as const;
  return [
    {
      figure: `History per turn, stream off → on, nobody subscribed (${turn}; events / protobuf bytes)`,
      turnpike: `${size(streaming.off)} → ${size(streaming.on)} (${added(streaming.added.unwatched)}; ${streaming.on.signals} signals)`,
      ...none,
    },
    {
      figure: `History per turn, stream off → on with a turnEvents subscriber (${turn})`,
      turnpike: `${size(streaming.off)} → ${size(streaming.onWithSubscriber)} (${added(streaming.added.watched)}; ${streaming.onWithSubscriber.signals} signals, ${streaming.onWithSubscriber.updates} updates)`,
      ...none,
    },
    {
      figure: `Token → subscriber, first token of a step (p50 / p95, n=${streaming.latency.firstToken.n}; tokens ${streaming.tokenIntervalMs} ms apart)`,
      turnpike: latencies(streaming.latency.firstToken),
      ...none,
    },
    {
      figure: `Token → subscriber, every token (p50 / p95, n=${streaming.latency.everyToken.n}; after the first, batched ≤ 200 ms)`,
      turnpike: latencies(streaming.latency.everyToken),
      ...none,
    },
    {
      figure: `Token → live subscriber, first token of a step (p50 / p95, n=${streaming.liveLatency.firstToken.n}; the same turns, live channel over IPC)`,
      turnpike: latencies(streaming.liveLatency.firstToken),
      ...none,
    },
    {
      figure: `Token → live subscriber, every token (p50 / p95, n=${streaming.liveLatency.everyToken.n})`,
      turnpike: latencies(streaming.liveLatency.everyToken),
      ...none,
    },
    {
      figure: `Token → live piece in the API process, every token (p50 / p95, n=${streaming.liveLatency.pieceArrival.n}; the channel alone)`,
      turnpike: latencies(streaming.liveLatency.pieceArrival),
      ...none,
    },
    {
      figure: 'Queries per second of a streaming turn: durable reader → live reader (each its own client); live pieces sent per second',
      turnpike: `${streaming.cost.durableQueriesPerSecond.toFixed(1)} → ${streaming.cost.liveQueriesPerSecond.toFixed(1)}; ${streaming.cost.livePiecesPerSecond.toFixed(1)} pieces/s`,
      ...none,
    },
    {
      figure: 'CPU per turn: worker, nobody reading → both readers; API (bench) process with both readers',
      turnpike: `${streaming.cost.workerCpuMs.unwatched.toFixed(0)} → ${streaming.cost.workerCpuMs.watched.toFixed(0)} ms; ${streaming.cost.apiCpuMs.watched.toFixed(0)} ms`,
      ...none,
    },
  ];
}

/**
 * The ai-sdk provider has no floor: the same turns through turnpike's `openai` provider → through
 * an AI SDK model on the same fake, both in the turnpike column, ai-sdk ÷ openai in brackets.
 */
export function aiSdkModelRows(figures: AiSdkModelFigures, targetRatio: number): ReportRow[] {
  const none = { floor: '—', ratio: '—', target: '—', met: null } as const;
  const rows: ReportRow[] = figures.bySteps.map((step) => ({
    figure: `Turn latency, ${step.steps} step${step.steps > 1 ? 's' : ''}, openai provider → ai-sdk provider (${figures.model}; p50 / p99, n=${step.openai.n})`,
    turnpike: `${pair(step.openai)} → ${pair(step.aiSdk)} (${x(step.ratioMedian)} / ${x(step.ratioP99)})`,
    ...none,
  }));
  const { perStep } = figures;
  rows.push({
    figure: `Per-step overhead, openai provider → ai-sdk provider (marginal, from ${perStep.fromSteps[0]} to ${perStep.fromSteps[1]} steps, p50)`,
    turnpike: `${ms(perStep.openai)} → ${ms(perStep.aiSdk)} (${x(perStep.ratio)})`,
    floor: '—',
    ratio: '—',
    target: `ai-sdk ≤ ${targetRatio}× openai`,
    met: perStep.ratio <= targetRatio,
  });
  return rows;
}

/** Readers have no floor either: the approval round trip of a turn with 0, 10 and 100 readers. */
export function readersRows(readers: ReadersFigures): ReportRow[] {
  return Object.entries(readers.approve).map(([count, modes]) => ({
    figure: `Approval round trip with ${count} readers of the parked turn (p50 / p99, n=${modes.shared.n}; one TurnpikeClient${modes.separate ? ' · each reader its own' : ''})`,
    turnpike: modes.separate ? `${pair(modes.shared)} · ${pair(modes.separate)}` : pair(modes.shared),
    floor: '—',
    ratio: '—',
    target: '—',
    met: null,
  }));
}

/** One model step streaming for minutes with 10 readers: the run's counts against Temporal's per-run limits. */
export function longStreamRow(long: LongStreamFigures): ReportRow {
  const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
  const { run, share } = long;
  return {
    figure: `${long.minutes} min of streaming (${long.words} words), ${long.readers} readers: the run's signals / updates / events / history bytes, and each as a share of its limit`,
    turnpike: `${run.signals} / ${run.updates} / ${run.events} / ${bytes(run.protoBytes)} (${percent(share.signals)} / ${percent(share.updates)} / ${percent(share.events)} / ${percent(share.protoBytes)})`,
    floor: '—',
    ratio: '—',
    target: 'each ≤ 50%',
    met: Object.values(share).every((value) => value <= 0.5),
  };
}

/** A finished long turn read by a client that never read it: the first events and its state (medians). */
export function closedTurnRows(closed: ClosedTurnFigures): ReportRow[] {
  const at = `finished ${closed.steps}-step turn (${closed.events} events, ${closed.runs} runs), fresh client, p50, n=${closed.resumeFirstEvent.n}`;
  const row = (figure: string, turnpike: string): ReportRow => ({ figure, turnpike, floor: '—', ratio: '—', target: '—', met: null });
  return [
    row(`Events resumed 21 before the end: first / turn-finished (${at})`, `${ms(closed.resumeFirstEvent.median)} / ${ms(closed.resumeLastEvent.median)}`),
    row(`Events from offset 0: first event (${at})`, ms(closed.fromStartFirstEvent.median)),
    row(`turnState after the end: first / again on the same client (${at})`, `${ms(closed.turnStateCold.median)} / ${ms(closed.turnStateWarm.median)}`),
  ];
}
