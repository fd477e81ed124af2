/**
 * A large image by reference: the same 3-step turn (model → tool → model → tool → model) through
 * turnpike's `openai` provider against the fake OpenAI server (Chat Completions, strict as the
 * real API), with and without a 10 MiB PNG in its user message, alternated turn by turn.
 *
 * The turns are started with `TurnpikeClient.startTurn`, which keeps the image in the content
 * store and gives the turn a `stored` source; every model step reads it back (and checks its
 * hash) and sends it inline, as a base64 `data:` URL, to the fake. Worker and client share a
 * `FileContentStore` in a temporary folder, so this scenario starts a turnpike worker of its own
 * (the run's turnpike worker keeps the store `TURNPIKE_CONTENT_STORE` names, and idles here).
 *
 * Per turn: the client's start (with the image: hashing and storing it), start → result, every
 * model step and tool step (activity scheduled → completed, from the turn's history events) and
 * the history's size (protobuf-encoded `fetchHistory()`, as Temporal stores it). The fake
 * records the size of every image it was sent, so each turn is checked to have sent the image,
 * whole, in each of its model steps (and the turn without it, none). Last, what a model step does
 * with the image before its request (read, hash check, base64) is timed alone, in this process.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { createTurnpikeDataConverter } from '../../content/data-converter.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { readStoredContent, storeLargeParts } from '../../content/stored-content.js';
import type { AgentTurnInput, ModelSettings } from '../../workflows/types/index.js';
import { scriptedPrompt } from '../bench-tools.js';
import type { BenchContext, Systems } from '../context.js';
import { FAKE_OPENAI_MODEL } from '../fake-openai-settings.js';
import { historySize } from '../history-size.js';
import { percentile, ratio, summarize, type Summary } from '../stats.js';
import { TurnpikeSystem } from '../turnpike-system.js';
import { WorkerHandle } from '../worker-handle.js';

const STEPS = 3;
/** 10 MiB: twice Anthropic's per-image limit, well inside Chat Completions' 50 MB. */
export const IMAGE_BYTES = 10 * 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface LargeImageSide {
  /** `TurnpikeClient.startTurn` until the server has the start; with the image, storing it first. */
  start: Summary;
  /** Start → result, as the caller sees the turn. */
  turn: Summary;
  /** Every model step of every turn (n = steps × turns): `callModel` scheduled → completed. */
  modelStep: Summary;
  /** Every tool step of every turn: `executeTool` scheduled → completed. */
  toolStep: Summary;
  /** Medians over the turns: events and protobuf bytes of the turn's whole history. */
  history: { events: number; protoBytes: number };
  /** The last turn's events by type: where any difference in events comes from. */
  eventTypes: Record<string, number>;
}

export interface LargeImageFigures {
  steps: number;
  turns: number;
  warmup: number;
  imageBytes: number;
  /** The image as the model steps send it: the length of its base64. */
  imageBase64Bytes: number;
  without: LargeImageSide;
  with: LargeImageSide;
  /** With ÷ without, of the medians. */
  ratio: { start: number; turn: number; modelStep: number; toolStep: number; historyProtoBytes: number };
  /**
   * turnpike's own share of a model step with the image, timed in this process on the same store:
   * `readStoredContent` of the stored image (read, hash check, base64), n = turns.
   */
  readBack: Summary;
  /** What the content store held at the end: one object per image (each turn's, and the read-back's, is new). */
  store: { objects: number; bytes: number };
}

/** A PNG-typed image of `bytes` bytes: the signature, then random bytes, new every call. */
function pngOf(bytes: number): Buffer {
  return Buffer.concat([PNG_SIGNATURE, randomBytes(bytes - PNG_SIGNATURE.length)]);
}

interface TurnSample {
  start: number;
  turn: number;
  modelSteps: number[];
  toolSteps: number[];
  events: number;
  protoBytes: number;
  eventTypes: Record<string, number>;
}

/** Scheduled → completed of every activity of `type` in the history, in milliseconds. */
async function activityDurations(handle: WorkflowHandle, type: string): Promise<number[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Map<string, number>();
  const durations: number[] = [];
  for (const event of events) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes?.activityType?.name === type) scheduled.set(String(event.eventId), tsToMs(event.eventTime));
    const completed = event.activityTaskCompletedEventAttributes;
    const at = completed ? scheduled.get(String(completed.scheduledEventId)) : undefined;
    if (at !== undefined) durations.push(tsToMs(event.eventTime) - at);
  }
  return durations;
}

export async function measureLargeImage(context: BenchContext, systems: Systems): Promise<LargeImageFigures> {
  const { options } = context;
  const turns = options.largeImageTurns;
  const warmup = 1;
  const folder = mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-content-'));
  const store = new FileContentStore(folder);
  const worker = await WorkerHandle.start({
    kind: 'turnpike',
    address: context.address,
    namespace: context.namespace,
    taskQueue: `bench-turnpike-large-image-${randomUUID().slice(0, 8)}`,
    bundlePath: context.bundlePaths.turnpike,
    openaiBaseURL: context.openaiBaseURL,
    contentFolder: folder,
    ...(systems.turnpike.worker.config.workerOptions ? { workerOptions: systems.turnpike.worker.config.workerOptions } : {}),
  });
  try {
    const taskQueue = worker.config.taskQueue;
    const client = new Client({ connection: context.client.connection, namespace: context.namespace, dataConverter: createTurnpikeDataConverter({ contentStore: store }) });
    const turnpike = new TurnpikeClient({ client, taskQueue, contentStore: store });
    const model: ModelSettings = { provider: 'openai', model: FAKE_OPENAI_MODEL };
    // Only for its check that a turn completed with the steps its prompt scripts.
    const checker = new TurnpikeSystem(client, taskQueue, worker, 'turnpike-openai', model);
    const prompt = scriptedPrompt(STEPS);

    const runTurn = async (image: Buffer | undefined): Promise<TurnSample> => {
      const input: AgentTurnInput = {
        model: { ...model },
        messages: [
          {
            role: 'user',
            content: image ? [{ type: 'text', text: prompt }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: image.toString('base64') } }] : prompt,
          },
        ],
      };
      context.fakeOpenAI.takeImageSizes();
      const started = performance.now();
      const handle = await turnpike.startTurn(input, { turnId: `turnpike-large-image-${image ? 'with' : 'without'}-${randomUUID()}` });
      const startedAt = performance.now();
      await checker.finishTurn(handle, STEPS);
      const finished = performance.now();
      const rejected = context.fakeOpenAI.takeRejected();
      if (rejected.length > 0) throw new Error(`the fake OpenAI server rejected ${rejected.length} requests of turn ${handle.workflowId}, e.g. ${rejected[0]}`);
      const sent = context.fakeOpenAI.takeImageSizes();
      const expected = image ? Array.from({ length: STEPS }, () => image.length) : [];
      if (JSON.stringify(sent) !== JSON.stringify(expected)) throw new Error(`turn ${handle.workflowId} sent images of ${JSON.stringify(sent)} bytes; expected ${JSON.stringify(expected)}`);
      const size = await historySize(handle);
      return {
        start: startedAt - started,
        turn: finished - started,
        modelSteps: await activityDurations(handle, 'callModel'),
        toolSteps: await activityDurations(handle, 'executeTool'),
        events: size.events,
        protoBytes: size.protoBytes,
        eventTypes: size.eventTypes,
      };
    };

    const samples: Record<'with' | 'without', TurnSample[]> = { with: [], without: [] };
    for (let index = -warmup; index < turns; index++) {
      // Alternated, and which goes first too, so the machine's load drifts over both alike.
      const order = index % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
      for (const side of order) {
        const image = side === 'with' ? pngOf(IMAGE_BYTES) : undefined;
        const sample = await runTurn(image);
        if (index >= 0) samples[side].push(sample);
      }
      if (index >= 0) context.log(`  large-image: ${index + 1}/${turns} turns per side`);
    }

    const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
    const side = (taken: TurnSample[]): LargeImageSide => ({
      start: summarize(taken.map((sample) => sample.start)),
      turn: summarize(taken.map((sample) => sample.turn)),
      modelStep: summarize(taken.flatMap((sample) => sample.modelSteps)),
      toolStep: summarize(taken.flatMap((sample) => sample.toolSteps)),
      history: { events: median(taken.map((sample) => sample.events)), protoBytes: median(taken.map((sample) => sample.protoBytes)) },
      eventTypes: taken.at(-1)?.eventTypes ?? {},
    });
    const without = side(samples.without);
    const withImage = side(samples.with);
    // The read-back a model step does before its provider request, without the request.
    const stored = await storeLargeParts([{ role: 'user', content: [{ type: 'image', source: { type: 'base64', mediaType: 'image/png', data: pngOf(IMAGE_BYTES).toString('base64') } }] }], store);
    const readBack: number[] = [];
    for (let index = 0; index < turns; index++) {
      const started = performance.now();
      await readStoredContent(stored, store);
      readBack.push(performance.now() - started);
    }
    let objects = 0;
    let bytes = 0;
    for await (const object of store.list()) {
      objects++;
      bytes += object.bytes;
    }
    return {
      steps: STEPS,
      turns,
      warmup,
      imageBytes: IMAGE_BYTES,
      imageBase64Bytes: Math.ceil(IMAGE_BYTES / 3) * 4,
      without,
      with: withImage,
      ratio: {
        start: ratio(withImage.start.median, without.start.median),
        turn: ratio(withImage.turn.median, without.turn.median),
        modelStep: ratio(withImage.modelStep.median, without.modelStep.median),
        toolStep: ratio(withImage.toolStep.median, without.toolStep.median),
        historyProtoBytes: ratio(withImage.history.protoBytes, without.history.protoBytes),
      },
      readBack: summarize(readBack),
      store: { objects, bytes },
    };
  } finally {
    await worker.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}
