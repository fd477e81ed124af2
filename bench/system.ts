/**
 * A system under test: turnpike, the floor it is compared with, or `@temporalio/ai-sdk`.
 * Scenarios drive them all through this one interface so that every figure is measured the
 * same way for each.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Message } from '../workflows/types/index.js';
import type { WorkerHandle } from './worker-handle.js';

/** The approval every benchmark resume sends: the request turnpike's README documents. */
export interface ApprovalRequest {
  approvalId: string;
  approved: boolean;
  approver: string;
}

export function approvalRequest(approvalId: string): ApprovalRequest {
  return { approvalId, approved: true, approver: 'bench' };
}

export interface SystemUnderTest {
  /** Unique per run: `turnpike`, `floor`, `turnpike-openai`, `ai-sdk`; keys the samples and workflow ids. */
  readonly name: string;
  readonly taskQueue: string;
  readonly worker: WorkerHandle;
  /**
   * Starts a turn of `steps` model calls: `steps - 1` tool steps with one server tool call each,
   * then an answer; `history` is the conversation before the turn's user message.
   */
  startTurn(steps: number, history?: Message[]): Promise<WorkflowHandle>;
  /**
   * Waits for a turn's result and checks it completed with the expected number of steps:
   * timings of turns that went wrong would be meaningless.
   */
  finishTurn(handle: WorkflowHandle, steps: number): Promise<void>;
  /**
   * Starts a turn that parks on one approval at its first step; after approval: 1 tool run and
   * the answer (2 steps). Only turnpike and the floor implement parking.
   */
  startParkedTurn(): Promise<WorkflowHandle>;
  /**
   * The approval id a client must learn before it can resume (turnpike: `turnState`), or
   * `undefined` while the turn has not parked yet. One query, as a dashboard would do.
   */
  approvalIdOf(handle: WorkflowHandle): Promise<string | undefined>;
  /** Sends the approval update and returns when the server reports it completed. */
  approve(handle: WorkflowHandle, approvalId: string): Promise<void>;
}

let sequence = 0;

/** Workflow ids unique within a run and readable in the Web UI: `<system>-<what>-<n>`. */
export function nextWorkflowId(system: string, what: string): string {
  return `${system}-${what}-${process.pid}-${++sequence}`;
}
