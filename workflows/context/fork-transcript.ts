/**
 * Reading a turn's transcript across forks: a forked turn's `transcript` query answers only its
 * own messages and the reference to its prefix (`HistoryPage.forkOf`), so a reader reads the
 * messages below `forkOf.prefixLength` from the run it names, which may be a fork itself. The
 * model activity (activities/transcript-source.ts) and the client (`turnTranscript`, `forkTurn`)
 * both read this way, each through its own Client; this file only stitches the pages.
 * No Temporal import: it runs outside workflows only, and is here so both floors can share it.
 */
import type { HistoryPage, HistoryPageRequest, Message } from '../types/index.js';

/** One `transcript` query of a run (`runId` undefined: the workflow's latest run). */
export type TranscriptQuery = (workflowId: string, runId: string | undefined, request: HistoryPageRequest) => Promise<HistoryPage>;

/** The messages from `offset` up to `to` (default: the whole transcript) of the run, prefixes read from the runs they came from. */
export async function readTranscript(query: TranscriptQuery, workflowId: string, runId: string | undefined, offset = 0, to = Infinity): Promise<Message[]> {
  const messages: Message[] = [];
  while (offset + messages.length < to) {
    const start = offset + messages.length;
    const page = await query(workflowId, runId, { offset: start, ...(Number.isFinite(to) ? { limit: to - start } : {}) });
    const end = Math.min(to, page?.total ?? 0);
    if (start >= end) break;
    const fork = page?.forkOf;
    if (fork && start < fork.prefixLength) {
      const upTo = Math.min(end, fork.prefixLength);
      const prefix = await readTranscript(query, fork.workflowId, fork.runId, start, upTo);
      messages.push(...prefix);
      if (prefix.length !== upTo - start) break;
      continue;
    }
    if (!Array.isArray(page?.messages) || page.messages.length === 0) break;
    messages.push(...page.messages.slice(0, end - start));
  }
  return messages;
}
