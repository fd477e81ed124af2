/** The shape of `bench/results/<name>.json`. */
import type { MachineInfo } from './machine-info.js';
import type { BenchOptions } from './options.js';
import type { AiSdkModelFigures } from './scenarios/ai-sdk-model.js';
import type { CapacityFigures } from './scenarios/parked-capacity.js';
import type { ClosedTurnFigures } from './scenarios/closed-turn.js';
import type { ClusterFigures } from './scenarios/cluster.js';
import type { EvaluationFigures } from './scenarios/evaluation.js';
import type { FleetFigures } from './scenarios/fleet.js';
import type { HistoryFigures } from './scenarios/history.js';
import type { LargeImageFigures } from './scenarios/large-image.js';
import type { LongStreamFigures } from './scenarios/long-stream.js';
import type { ReadersFigures } from './scenarios/readers.js';
import type { ResumeLatencyFigures } from './scenarios/resume-latency.js';
import type { ResumePayloadFigures } from './scenarios/resume-payload.js';
import type { ScaleFigures } from './scenarios/scale.js';
import type { StreamingFigures } from './scenarios/streaming.js';
import type { ThroughputFigures } from './scenarios/throughput.js';
import type { TurnLatencyFigures } from './scenarios/turn-latency.js';
import type { ReportRow } from './report-row.js';
import type { WorkerSettings } from './worker-protocol.js';

export type { ReportRow } from './report-row.js';

export interface Figures {
  latency?: TurnLatencyFigures;
  resume?: ResumeLatencyFigures;
  throughput?: ThroughputFigures;
  capacity?: CapacityFigures;
  history?: HistoryFigures;
  payload?: ResumePayloadFigures;
  scale?: ScaleFigures;
  streaming?: StreamingFigures;
  readers?: ReadersFigures;
  'long-stream'?: LongStreamFigures;
  'large-image'?: LargeImageFigures;
  'ai-sdk-model'?: AiSdkModelFigures;
  'closed-turn'?: ClosedTurnFigures;
  fleet?: FleetFigures;
  cluster?: ClusterFigures;
  eval?: EvaluationFigures;
}


export interface BenchResults {
  machine: MachineInfo;
  options: BenchOptions;
  /** The settings each worker ran with: turnpike's from `createWorker`, the floor given the same cache and slots. */
  workerSettings?: { turnpike: WorkerSettings; floor: WorkerSettings };
  figures: Figures;
  /**
   * Why `@temporalio/ai-sdk` was not measured: `run` for the whole run, else by scenario.
   * Empty when it was measured wherever it is compared (latency, throughput, history).
   */
  aiSdkNotMeasured: Record<string, string>;
  rows: ReportRow[];
  /** Scenarios that failed, with the error: a partial run still reports what it measured. */
  errors: Record<string, string>;
  durationSeconds: number;
}
