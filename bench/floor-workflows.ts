/**
 * The FLOOR: the least a hand-written Temporal workflow must do to run a turn of the same
 * shape as turnpike's, so that turnpike's figures can be read as a multiple of what Temporal
 * itself costs on this machine in the same run.
 *
 * Per tool step: 1 `callModel` activity (turnpike's first one also describes the turn's tools,
 * and each decides its step's calls: no local activity), 1 `executeTool` activity; then 1 final
 * `callModel`.
 * With `approval`, the first tool step waits on a `condition` that an update handler sets,
 * turnpike's park without its timeout timer, search attributes or validation; with
 * `contractPark` as well, the same wait with the timer and the search attributes a
 * hand-written workflow needs for the contract's park (see `FloorTurnInput`).
 *
 * Bundled on its own (`bundleWorkflowCode`), run by its own worker on its own task queue.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { FloorActivities } from './floor-activities.js';
import { floorApproveUpdate, floorParkedQuery, type FloorTurnInput, type FloorTurnResult } from './floor-definitions.js';

// The same timeouts as turnpike, so that retries (never expected here) would behave alike.
const { callModel, executeTool } = proxyActivities<FloorActivities>({ startToCloseTimeout: '60s' });

const statusKey = defineSearchAttributeKey('AgentTurnStatus', SearchAttributeType.KEYWORD);
const pendingToolsKey = defineSearchAttributeKey('AgentPendingTools', SearchAttributeType.KEYWORD_LIST);

export async function floorTurn({ toolSteps, approval, contractPark, messages }: FloorTurnInput): Promise<FloorTurnResult> {
  let approved = false;
  let parked = false;
  setHandler(floorParkedQuery, () => parked && !approved);
  setHandler(floorApproveUpdate, (request) => {
    approved = true;
    return { approvalId: request.approvalId, approved: request.approved };
  });
  const conversation = messages ? [...messages] : undefined;
  for (let step = 1; step <= toolSteps; step++) {
    await callModel({ step, last: false, ...(conversation ? { messages: conversation } : {}) });
    if (approval && step === 1) {
      parked = true;
      if (contractPark) {
        upsertSearchAttributes([{ key: statusKey, value: 'parked' }, { key: pendingToolsKey, value: ['bench_tool'] }]);
        if (!(await condition(() => approved, '24h'))) throw new Error('floor approval expired');
        upsertSearchAttributes([{ key: statusKey, value: 'running' }, { key: pendingToolsKey, value: [] }]);
      } else {
        await condition(() => approved);
      }
    }
    const output = await executeTool({ i: step });
    if (conversation) {
      const toolCallId = `call_${step}`;
      conversation.push(
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId, toolName: 'bench_tool', input: { i: step } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName: 'bench_tool', output }] },
      );
    }
  }
  await callModel({ step: toolSteps + 1, last: true, ...(conversation ? { messages: conversation } : {}) });
  return { steps: toolSteps + 1 };
}
