/**
 * A user's own workflows file, as an application writes it: its own workflow next to
 * turnpike's two, which it re-exports. Bundled by `plugin.test.ts` with `TurnpikePlugin`.
 */
import * as wf from '@temporalio/workflow';
import { executeAgentTurn, startAgentTurn, type AgentTurnResult, type ModelSettings } from '../../workflows/index.js';

export { agentConversation, agentTurn } from '../../workflows/index.js';

const { recordOrderNote } = wf.proxyActivities<{ recordOrderNote(note: string): Promise<void> }>({ startToCloseTimeout: '10s' });

export interface OrderDeskInput {
  request: string;
  model: ModelSettings;
  /** Start the turn and await its handle's result instead of executeAgentTurn. */
  viaHandle?: boolean;
}

/** Runs one agent turn as a child (id `<this id>/agent`), then the application's own activity. */
export async function orderDesk({ request, model, viaHandle }: OrderDeskInput): Promise<AgentTurnResult> {
  const input = { model, messages: [{ role: 'user' as const, content: request }] };
  const workflowId = `${wf.workflowInfo().workflowId}/agent`;
  const result = viaHandle
    ? await (await startAgentTurn(input, { workflowId })).result()
    : await executeAgentTurn(input, { workflowId });
  await recordOrderNote(`turn ${workflowId} ended ${result.status}`);
  return result;
}
