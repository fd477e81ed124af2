/**
 * The report's rows: every figure next to the floor and, where measured, next to
 * `@temporalio/ai-sdk`, and the targets turnpike is held to (against the floor).
 *
 *   - per-step overhead within 1.1× the floor's, and below ai-sdk's where it is measured;
 *   - resume latency p50 ≤ 50 ms and p99 ≤ 200 ms with 1,000 turns parked;
 *   - throughput ≥ 0.7× the floor's;
 *   - 5,000 turns parked with worker RSS ≤ 1.1× the floor's and near-zero idle CPU;
 *   - 20,000 turns parked: worker RSS ≤ 1.1× that at 5,000, resume p99 ≤ 100 ms (cache misses);
 *   - a resume payload ≤ 300 bytes at any conversation length;
 *   - history bytes per model step: below ai-sdk's at every conversation length; at the longest,
 *     ≤ 1.2× those at the shortest and ≤ 1.2× the floor's;
 *   - events per park ≤ the floor's + 1;
 *   - the `ai-sdk` provider's per-step overhead ≤ 1.1× the native `openai` provider's.
 *
 * A target is only judged at the size it names (a `--quick` run parks fewer turns); a smaller
 * run reports the figure with `met: null`.
 *
 * The rows of figures with no floor are in rows-without-floor.ts. This file stays whole past 300
 * lines: `reportRows` and `scaleRows` are the targets' judgements, row by row, next to `TARGETS`.
 */
import type { Figures, ReportRow } from './results.js';
import type { HistorySide } from './scenarios/history.js';
import type { ScaleFigures } from './scenarios/scale.js';
import { bytes, judged, ms, pair, ratioPair, tps, x } from './row-format.js';
import { fleetRows } from './scenarios/fleet-rows.js';
import { clusterRows } from './scenarios/cluster.js';
import { evaluationRows } from './scenarios/evaluation.js';
import { aiSdkModelRows, closedTurnRows, largeImageRows, longStreamRow, readersRows, streamingRows } from './rows-without-floor.js';

export const TARGETS = {
  perStepRatio: 1.1,
  /** The `ai-sdk` provider's per-step overhead against the native `openai` provider's (issue #43). */
  aiSdkModelPerStepRatio: 1.1,
  historyGrowthRatio: 1.2,
  resumeP50Ms: 50,
  resumeP99Ms: 200,
  resumeParked: 1000,
  throughputRatio: 0.7,
  capacityParked: 5000,
  capacityRssRatio: 1.1,
  scaleParked: 20000,
  scaleGrowthRatio: 1.1,
  scaleResumeP99Ms: 100,
  /**
   * "Near-zero" idle CPU, made concrete: at most 1% of one core, i.e. 0.1 CPU-seconds in a
   * 10 s window (scaled to the window's length).
   */
  idleCpuShareOfCore: 0.01,
  resumePayloadBytes: 300,
} as const;

export function reportRows(figures: Figures): ReportRow[] {
  const rows: ReportRow[] = [];
  const { latency, resume, throughput, capacity, history, payload, scale, streaming, readers } = figures;

  if (latency) {
    for (const step of latency.bySteps) {
      rows.push({
        figure: `Turn latency, ${step.steps} step${step.steps > 1 ? 's' : ''} (p50 / p99, n=${step.turnpike.n})`,
        turnpike: pair(step.turnpike),
        floor: pair(step.floor),
        ratio: ratioPair(step.ratioMedian, step.ratioP99),
        ...(step.aiSdk ? { aiSdk: { turnpike: pair(step.aiSdk.turnpike), aiSdk: pair(step.aiSdk.aiSdk), ratio: ratioPair(step.aiSdk.ratioMedian, step.aiSdk.ratioP99) } } : {}),
        target: '—',
        met: null,
      });
    }
    const { perStep } = latency;
    rows.push({
      figure: `Per-step overhead (marginal, from ${perStep.fromSteps[0]} to ${perStep.fromSteps[1]} steps, p50)`,
      turnpike: ms(perStep.turnpike),
      floor: ms(perStep.floor),
      ratio: x(perStep.ratio),
      ...(perStep.aiSdk ? { aiSdk: { turnpike: ms(perStep.aiSdk.turnpike), aiSdk: ms(perStep.aiSdk.aiSdk), ratio: x(perStep.aiSdk.ratio) } } : {}),
      target: `≤ ${TARGETS.perStepRatio}× floor${perStep.aiSdk ? ', < ai-sdk' : ''}`,
      met: perStep.ratio <= TARGETS.perStepRatio && (!perStep.aiSdk || perStep.aiSdk.ratio < 1),
    });
  }

  if (resume) {
    const applies = resume.parked >= TARGETS.resumeParked;
    rows.push({
      figure: `Update round trip, ${resume.parked} parked (p50 / p99, n=${resume.sample})`,
      turnpike: pair(resume.turnpike.updateRoundTrip),
      floor: pair(resume.floor.updateRoundTrip),
      ratio: ratioPair(resume.ratio.updateMedian, resume.ratio.updateP99),
      target: '—',
      met: null,
    });
    rows.push({
      figure: `Resume latency (update accepted → result), ${resume.parked} parked (p50 / p99, n=${resume.sample})`,
      turnpike: pair(resume.turnpike.resume),
      floor: pair(resume.floor.resume),
      ratio: ratioPair(resume.ratio.resumeMedian, resume.ratio.resumeP99),
      target: `p50 ≤ ${TARGETS.resumeP50Ms} ms, p99 ≤ ${TARGETS.resumeP99Ms} ms at ${TARGETS.resumeParked} parked`,
      met: judged(applies, resume.turnpike.resume.median <= TARGETS.resumeP50Ms && resume.turnpike.resume.p99 <= TARGETS.resumeP99Ms),
      ...(applies ? {} : { note: `only ${resume.parked} parked` }),
    });
    const validators = resume.validators;
    if (validators) {
      const us = (summary: { median: number }) => `${summary.median.toFixed(1)} µs`;
      rows.push({
        figure:
          'Update validator per message, turnpike only (p50 of 30 rounds): decision / edited input, first on a turn / edited input / refused / client result; share of the update round trip p50',
        turnpike: `${us(validators.approve)} / ${us(validators.editedInputFirst)} / ${us(validators.editedInput)} / ${us(validators.rejected)} / ${us(validators.submitResult)}; ${((validators.approve.median / 1000 / resume.turnpike.updateRoundTrip.median) * 100).toFixed(2)}%`,
        floor: '— (no validator)',
        ratio: '—',
        target: '—',
        met: null,
      });
    }
  }

  if (throughput) {
    rows.push({
      figure: `Throughput, ${throughput.steps}-step turns, ${throughput.concurrency} concurrent starters (${throughput.turns} turns)`,
      turnpike: tps(throughput.turnpike),
      floor: tps(throughput.floor),
      ratio: x(throughput.ratio),
      ...(throughput.aiSdk ? { aiSdk: { turnpike: tps(throughput.aiSdk.turnpike), aiSdk: tps(throughput.aiSdk.aiSdk), ratio: x(throughput.aiSdk.ratio) } } : {}),
      target: `≥ ${TARGETS.throughputRatio}× floor`,
      met: throughput.ratio >= TARGETS.throughputRatio,
    });
    rows.push({
      figure: 'Worker CPU per turn under load',
      turnpike: ms(throughput.turnpike.workerCpuMsPerTurn),
      floor: ms(throughput.floor.workerCpuMsPerTurn),
      ratio: x(throughput.turnpike.workerCpuMsPerTurn / throughput.floor.workerCpuMsPerTurn),
      ...(throughput.aiSdk
        ? {
            aiSdk: {
              turnpike: ms(throughput.aiSdk.turnpike.workerCpuMsPerTurn),
              aiSdk: ms(throughput.aiSdk.aiSdk.workerCpuMsPerTurn),
              ratio: x(throughput.aiSdk.turnpike.workerCpuMsPerTurn / throughput.aiSdk.aiSdk.workerCpuMsPerTurn),
            },
          }
        : {}),
      target: '—',
      met: null,
    });
  }

  if (capacity) {
    const applies = capacity.capacity >= TARGETS.capacityParked;
    const cpuLimit = TARGETS.idleCpuShareOfCore * capacity.idleSeconds;
    rows.push({
      figure: `Worker RSS, ${capacity.capacity} parked (maxCachedWorkflows ${capacity.turnpike.settings.maxCachedWorkflows})`,
      turnpike: `${capacity.turnpike.rssMB.toFixed(0)} MB`,
      floor: `${capacity.floor.rssMB.toFixed(0)} MB`,
      ratio: x(capacity.ratio.rss),
      target: `≤ ${TARGETS.capacityRssRatio}× floor at ${TARGETS.capacityParked} parked`,
      met: judged(applies, capacity.ratio.rss <= TARGETS.capacityRssRatio),
      ...(applies ? {} : { note: `only ${capacity.capacity} parked` }),
    });
    const live = (side: typeof capacity.turnpike) => side.heapsMB.reduce((sum, heap) => sum + heap.usedAfterGc, 0);
    const heapsBefore = (side: typeof capacity.turnpike) => side.heapsMB.reduce((sum, heap) => sum + heap.total, 0);
    rows.push({
      figure: `Worker V8 heaps, all threads: allocated → live after a forced GC (RSS after GC), ${capacity.capacity} parked`,
      turnpike: `${heapsBefore(capacity.turnpike).toFixed(0)} → ${live(capacity.turnpike).toFixed(0)} MB (${capacity.turnpike.rssAfterGcMB.toFixed(0)} MB)`,
      floor: `${heapsBefore(capacity.floor).toFixed(0)} → ${live(capacity.floor).toFixed(0)} MB (${capacity.floor.rssAfterGcMB.toFixed(0)} MB)`,
      ratio: x(live(capacity.turnpike) / live(capacity.floor)),
      target: '—',
      met: null,
    });
    if (capacity.instanceHeapKB) {
      rows.push({
        figure: 'Workflow thread heap per workflow instance, before its code runs (module state; per cached turn)',
        turnpike: `${capacity.instanceHeapKB.turnpike.toFixed(0)} KB`,
        floor: `${capacity.instanceHeapKB.floor.toFixed(0)} KB`,
        ratio: x(capacity.instanceHeapKB.turnpike / capacity.instanceHeapKB.floor),
        target: '—',
        met: null,
      });
    }
    rows.push({
      figure: `Worker idle CPU, ${capacity.capacity} parked, over ${capacity.idleSeconds} s`,
      turnpike: `${capacity.turnpike.idleCpuSeconds.toFixed(3)} CPU-s`,
      floor: `${capacity.floor.idleCpuSeconds.toFixed(3)} CPU-s`,
      ratio: x(capacity.ratio.idleCpu),
      target: `near zero (≤ ${cpuLimit.toFixed(2)} CPU-s = ${TARGETS.idleCpuShareOfCore * 100}% of a core)`,
      met: judged(applies, capacity.turnpike.idleCpuSeconds <= cpuLimit),
      ...(applies ? {} : { note: `only ${capacity.capacity} parked` }),
    });
  }

  if (history) {
    const { aiSdk } = history;
    const tenSteps = (side: HistorySide) => `${side.bySteps[10].events} / ${side.bySteps[10].protoBytes} B`;
    rows.push({
      figure: 'History events per step',
      turnpike: history.turnpike.perStep.events.toFixed(1),
      floor: history.floor.perStep.events.toFixed(1),
      ratio: x(history.ratio.eventsPerStep),
      ...(aiSdk ? { aiSdk: { turnpike: aiSdk.turnpike.perStep.events.toFixed(1), aiSdk: aiSdk.aiSdk.perStep.events.toFixed(1), ratio: x(aiSdk.ratio.eventsPerStep) } } : {}),
      target: '—',
      met: null,
    });
    rows.push({
      figure: 'History bytes per step (protobuf; 1→10 steps, marginal)',
      turnpike: bytes(history.turnpike.perStep.protoBytes),
      floor: bytes(history.floor.perStep.protoBytes),
      ratio: x(history.ratio.bytesPerStep),
      ...(aiSdk ? { aiSdk: { turnpike: bytes(aiSdk.turnpike.perStep.protoBytes), aiSdk: bytes(aiSdk.aiSdk.perStep.protoBytes), ratio: x(aiSdk.ratio.bytesPerStep) } } : {}),
      target: '—',
      met: null,
    });
    rows.push({
      figure: 'History of a 10-step turn (events / protobuf bytes)',
      turnpike: tenSteps(history.turnpike),
      floor: tenSteps(history.floor),
      ratio: x(history.turnpike.bySteps[10].protoBytes / history.floor.bySteps[10].protoBytes),
      ...(aiSdk ? { aiSdk: { turnpike: tenSteps(aiSdk.turnpike), aiSdk: tenSteps(aiSdk.aiSdk), ratio: x(aiSdk.turnpike.bySteps[10].protoBytes / aiSdk.aiSdk.bySteps[10].protoBytes) } } : {}),
      target: '—',
      met: null,
    });
    const parkEvents = history.turnpike.perPark?.events;
    rows.push({
      figure: 'History events added by one park (approval turn − 2-step turn)',
      turnpike: parkEvents?.toFixed(0) ?? '—',
      floor: history.floor.perPark?.events.toFixed(0) ?? '—',
      ratio: x(history.ratio.eventsPerPark),
      target: '≤ floor + 1',
      met: parkEvents === undefined || history.floor.perPark === undefined ? null : parkEvents <= history.floor.perPark.events + 1,
    });
    const contractPark = history.floor.contractPark?.events;
    if (contractPark !== undefined && parkEvents !== undefined) {
      rows.push({
        figure:
          "History events added by one park, against a floor that parks as the contract needs (status and pending-tools search attributes at park and resume, the approval's expiry as `condition(…, '24h')`, whose timer is cancelled by the decision)",
        turnpike: parkEvents.toFixed(0),
        floor: contractPark.toFixed(0),
        ratio: x(parkEvents / contractPark),
        target: '≤ that floor + 1',
        met: parkEvents <= contractPark + 1,
      });
    }
    const byConversation = history.byConversation ?? {};
    const lengths = (byConversation.turnpike ?? []).map((row) => row.messages);
    const stepBytes = (name: string, index: number) => byConversation[name]?.[index]?.perStep.protoBytes ?? Number.NaN;
    /** Below ai-sdk at every length; at the longest, also ≤ 1.2× the shortest and ≤ 1.2× the floor. */
    const historyTarget = (index: number): Pick<ReportRow, 'target' | 'met'> => {
      const aheadOfAiSdk = byConversation['ai-sdk'] ? stepBytes('turnpike-openai', index) < stepBytes('ai-sdk', index) : undefined;
      if (index < lengths.length - 1 || lengths.length < 2) {
        return aheadOfAiSdk === undefined ? { target: '—', met: null } : { target: '< ai-sdk', met: aheadOfAiSdk };
      }
      const growth = stepBytes('turnpike', index) / stepBytes('turnpike', 0);
      const vsFloor = stepBytes('turnpike', index) / stepBytes('floor', index);
      return {
        target: `≤ ${TARGETS.historyGrowthRatio}× at ${lengths[0]} messages (here ${x(growth)}) and ≤ ${TARGETS.historyGrowthRatio}× floor${aheadOfAiSdk === undefined ? '' : ', < ai-sdk'}`,
        met: growth <= TARGETS.historyGrowthRatio && vsFloor <= TARGETS.historyGrowthRatio && aheadOfAiSdk !== false,
      };
    };
    for (const [index, messages] of lengths.entries()) {
      const at = (name: string) => byConversation[name]?.[index];
      const cost = (name: string) => {
        const row = at(name);
        return row ? `${row.perStep.events.toFixed(1)} / ${bytes(row.perStep.protoBytes)}` : '—';
      };
      const bytesRatio = (a: string, b: string) => x((at(a)?.perStep.protoBytes ?? Number.NaN) / (at(b)?.perStep.protoBytes ?? Number.NaN));
      rows.push({
        figure: `History per model step after ${messages} prior messages (events / protobuf bytes; 1→3 steps, marginal)`,
        turnpike: cost('turnpike'),
        floor: cost('floor'),
        ratio: bytesRatio('turnpike', 'floor'),
        ...(at('ai-sdk') ? { aiSdk: { turnpike: cost('turnpike-openai'), aiSdk: cost('ai-sdk'), ratio: bytesRatio('turnpike-openai', 'ai-sdk') } } : {}),
        ...historyTarget(index),
      });
    }
  }

  if (payload) {
    const lengths = payload.turnpike.map((row) => row.messages).join(' / ');
    rows.push({
      figure: `Resume payload (approveToolCall JSON) at ${lengths} messages`,
      turnpike: payload.turnpike.map((row) => `${row.resumePayloadBytes} B`).join(' / '),
      floor: `${payload.floor.resumePayloadBytes} B`,
      ratio: x(payload.ratio),
      target: `≤ ${TARGETS.resumePayloadBytes} B at any length`,
      met: payload.maxResumePayloadBytes <= TARGETS.resumePayloadBytes,
    });
    rows.push({
      figure: `Whole UpdateWorkflowExecution request on the wire at ${lengths} messages`,
      turnpike: payload.turnpike.map((row) => `${row.updateRequestBytes} B`).join(' / '),
      floor: `${payload.floor.updateRequestBytes} B`,
      ratio: x(payload.maxUpdateRequestBytes / payload.floor.updateRequestBytes),
      target: '—',
      met: null,
    });
  }
  if (scale) rows.push(...scaleRows(scale));
  if (streaming) rows.push(...streamingRows(streaming));
  if (readers) rows.push(...readersRows(readers));
  const longStream = figures['long-stream'];
  if (longStream) rows.push(longStreamRow(longStream));
  const largeImage = figures['large-image'];
  if (largeImage) rows.push(...largeImageRows(largeImage));
  const aiSdkModel = figures['ai-sdk-model'];
  if (aiSdkModel) rows.push(...aiSdkModelRows(aiSdkModel, TARGETS.aiSdkModelPerStepRatio));
  const closedTurn = figures['closed-turn'];
  if (closedTurn) rows.push(...closedTurnRows(closedTurn));
  if (figures.fleet) rows.push(...fleetRows(figures.fleet));
  if (figures.cluster) rows.push(...clusterRows(figures.cluster));
  if (figures.eval) rows.push(...evaluationRows(figures.eval));
  return rows;
}


function scaleRows(scale: ScaleFigures): ReportRow[] {
  const last = scale.stages.at(-1)!;
  const applies = last.parked >= TARGETS.scaleParked;
  const note = applies ? {} : { note: `only ${last.parked} parked` };
  const stages = scale.stages.map((stage) => stage.parked).join(' / ');
  const mb = (values: number[]) => values.map((value) => value.toFixed(0)).join(' / ') + ' MB';
  const serverRss = scale.stages.map((stage) => stage.serverRssMB).filter((value) => value !== undefined);
  const rows: ReportRow[] = [
    {
      figure: `Worker RSS at ${stages} parked (growth to the last stage from ${scale.stages.find((stage) => stage.parked === TARGETS.capacityParked)?.parked ?? 'the one before'})`,
      turnpike: `${mb(scale.stages.map((stage) => stage.turnpike.rssMB))} (${x(scale.ratio.turnpikeGrowth)})`,
      floor: `${mb(scale.stages.map((stage) => stage.floor.rssMB))} (${x(scale.ratio.floorGrowth)})`,
      ratio: x(last.ratio.rss),
      target: `at ${TARGETS.scaleParked} ≤ ${TARGETS.scaleGrowthRatio}× at ${TARGETS.capacityParked}`,
      met: judged(applies, scale.ratio.turnpikeGrowth <= TARGETS.scaleGrowthRatio),
      ...note,
    },
    {
      figure: `Time to park ${last.parked} turns (both systems at once, in stages)`,
      turnpike: `${scale.turnpike.parkSeconds.toFixed(0)} s`,
      floor: `${scale.floor.parkSeconds.toFixed(0)} s`,
      ratio: x(scale.turnpike.parkSeconds / scale.floor.parkSeconds),
      target: '—',
      met: null,
    },
    {
      figure: `Worker idle CPU, ${last.parked} parked, over ${scale.idleSeconds} s`,
      turnpike: `${scale.turnpike.idleCpuSeconds.toFixed(3)} CPU-s`,
      floor: `${scale.floor.idleCpuSeconds.toFixed(3)} CPU-s`,
      ratio: x(scale.turnpike.idleCpuSeconds / scale.floor.idleCpuSeconds),
      target: '—',
      met: null,
    },
    {
      figure: `Resume latency, ${last.parked} parked, every resume a cache miss (p50 / p99, n=${scale.sample})`,
      turnpike: pair(scale.turnpike.resume),
      floor: pair(scale.floor.resume),
      ratio: ratioPair(scale.ratio.resumeMedian, scale.ratio.resumeP99),
      target: `p99 ≤ ${TARGETS.scaleResumeP99Ms} ms at ${TARGETS.scaleParked} parked`,
      met: judged(applies, scale.turnpike.resume.p99 <= TARGETS.scaleResumeP99Ms),
      ...note,
    },
  ];
  if (serverRss.length > 0) {
    rows.push({
      figure: `Dev server RSS at ${stages} parked per system (one server holds both systems' turns)`,
      turnpike: mb(serverRss as number[]) + (scale.serverIdleCpuSeconds !== undefined ? `; idle ${scale.serverIdleCpuSeconds.toFixed(2)} CPU-s over ${scale.idleSeconds} s` : ''),
      floor: '(same server)',
      ratio: '—',
      target: '—',
      met: null,
    });
  }
  return rows;
}
