/**
 * What readers of a parked turn cost its decisions: the approval's update round trip with 0, 10
 * and 100 readers following the turn from its start, two ways —
 *   - `shared`: all through one `TurnpikeClient` (one HTTP API process): one feed reads the turn;
 *   - `separate`: each reader on its own feed (`readEventStream`), as readers in that many
 *     processes would be: the turn answers every one's queries.
 * One parked turn per sample, its readers attached and reading before the approval is sent; the
 * readers then follow the turn to `turn-finished`. turnpike only: the floor has no stream.
 */
import { performance } from 'node:perf_hooks';
import { readEventStream } from '../../client/event-subscription.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnEventsQuery } from '../../workflows/messages/definitions.js';
import type { BenchContext, Systems } from '../context.js';
import { summarize, type Summary } from '../stats.js';
import { approvalIds } from './park.js';

export const READER_COUNTS = [0, 10, 100] as const;

export interface ReadersFigures {
  samples: number;
  /** Approval round trip (ms) by reader count and how the readers read. */
  approve: Record<string, { shared: Summary; separate?: Summary }>;
  /** Events every reader saw, summed over all samples (each reader reads to turn-finished). */
  eventsRead: number;
}

export async function measureReaders(context: BenchContext, systems: Systems): Promise<ReadersFigures> {
  const samples = context.options.quick ? 10 : 30;
  const system = systems.turnpike;
  const turnpike = new TurnpikeClient({ client: context.client, taskQueue: system.taskQueue });
  // Warm-up, so the first sample does not pay for JIT and first contexts.
  await system.finishTurn(await system.startTurn(3), 3);
  const approve: ReadersFigures['approve'] = {};
  let eventsRead = 0;
  for (const readers of READER_COUNTS) {
    const modes = readers === 0 ? (['shared'] as const) : (['shared', 'separate'] as const);
    const times: Record<string, number[]> = { shared: [], separate: [] };
    for (let sample = 0; sample < samples; sample++) {
      for (const mode of modes) {
        const handle = await system.startParkedTurn();
        const [approvalId] = await approvalIds(system, [handle]);
        const read = () => (mode === 'shared' ? turnpike.turnEvents(handle.workflowId) : readEventStream(context.client, handle.workflowId, turnEventsQuery, { isLast: (event) => event.type === 'turn-finished' }));
        const following = Array.from({ length: readers }, async () => {
          let seen = 0;
          for await (const _ of read()) seen++;
          return seen;
        });
        // Every reader has read the parked turn's events at least once.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const sent = performance.now();
        await system.approve(handle, approvalId!);
        times[mode]!.push(performance.now() - sent);
        await system.finishTurn(handle, 2);
        for (const seen of await Promise.all(following)) eventsRead += seen;
      }
    }
    approve[String(readers)] = { shared: summarize(times.shared!), ...(readers > 0 ? { separate: summarize(times.separate!) } : {}) };
    context.log(`  readers: ${readers} readers, approve p50 ${approve[String(readers)]!.shared.median.toFixed(1)} ms shared${readers > 0 ? `, ${approve[String(readers)]!.separate!.median.toFixed(1)} ms separate` : ''}`);
  }
  return { samples, approve, eventsRead };
}
