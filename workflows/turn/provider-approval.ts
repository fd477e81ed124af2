/**
 * Settling a provider's own approval request (`calls/provider-approvals.ts`): it parks for a
 * person exactly as a tool call that needs approval does (`parking.ts`: listed, in `turnState`,
 * nudged, audited in the turn's decisions, denied when it expires), and its decision is its one
 * result. Approved, nothing runs here: the provider runs the MCP tool when it reads the approval
 * on the next step. Denied, expired or superseded, the result says why, and the provider tells the
 * model so with its answer to the request.
 */
import type { CallEntry } from '../calls/call-ledger.js';
import { PROVIDER_APPROVAL_APPROVED, PROVIDER_APPROVAL_SPEC } from '../calls/provider-approvals.js';
import type { Settlement } from '../calls/tool-results.js';
import type { TurnContext } from '../context/turn-context.js';
import { awaitApproval } from './parking.js';

/** The patch behind which an OpenAI remote MCP approval request parks for a person (docs/versioning.md). */
export const MCP_APPROVAL_PATCH = '0.4.0-mcp-approval';

export async function settleProviderApproval(turn: TurnContext, entry: CallEntry): Promise<Settlement> {
  const input = entry.call.input;
  const outcome = await awaitApproval(turn, entry, PROVIDER_APPROVAL_SPEC, input);
  if ('settlement' in outcome) return outcome.settlement;
  return { outcome: 'approved', output: PROVIDER_APPROVAL_APPROVED, isError: false, input, approval: outcome.run.approval };
}
