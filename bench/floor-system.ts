/** The floor as a system under test: `floorTurn` workflows of the same shape as turnpike's turns. */
import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { FLOOR_WORKFLOW, floorApproveUpdate, floorParkedQuery, type FloorTurnInput, type FloorTurnResult } from './floor-definitions.js';
import type { Message } from '../workflows/types/index.js';
import { scriptedPrompt } from './bench-tools.js';
import { approvalRequest, nextWorkflowId, type SystemUnderTest } from './system.js';
import type { WorkerHandle } from './worker-handle.js';

export class FloorSystem implements SystemUnderTest {
  readonly name = 'floor' as const;
  /** Same form and length as turnpike's `apr_<32 hex>`, so the resume payloads weigh the same. */
  private readonly approvalId = `apr_${randomBytes(16).toString('hex')}`;

  constructor(
    private readonly client: Client,
    readonly taskQueue: string,
    readonly worker: WorkerHandle,
  ) {}

  private start(input: FloorTurnInput, what: string): Promise<WorkflowHandle> {
    return this.client.workflow.start(FLOOR_WORKFLOW, { taskQueue: this.taskQueue, workflowId: nextWorkflowId(this.name, what), args: [input] });
  }

  startTurn(steps: number, history?: Message[]): Promise<WorkflowHandle> {
    const messages = history ? [...history, { role: 'user', content: scriptedPrompt(steps) }] : undefined;
    return this.start({ toolSteps: steps - 1, ...(messages ? { messages } : {}) }, `turn${steps}`);
  }

  async finishTurn(handle: WorkflowHandle, steps: number): Promise<void> {
    const result = (await handle.result()) as FloorTurnResult;
    if (result.steps !== steps) throw new Error(`floor turn ${handle.workflowId} ran ${result.steps} steps, expected ${steps}`);
  }

  /** `contractPark`: park with the search attributes and expiry timer of turnpike's contract. */
  startParkedTurn(options: { contractPark?: boolean } = {}): Promise<WorkflowHandle> {
    return this.start({ toolSteps: 1, approval: true, ...(options.contractPark ? { contractPark: true } : {}) }, 'parked');
  }

  async approvalIdOf(handle: WorkflowHandle): Promise<string | undefined> {
    try {
      return (await handle.query(floorParkedQuery)) ? this.approvalId : undefined;
    } catch {
      return undefined;
    }
  }

  async approve(handle: WorkflowHandle, approvalId: string): Promise<void> {
    await handle.executeUpdate(floorApproveUpdate, { args: [approvalRequest(approvalId)] });
  }
}
