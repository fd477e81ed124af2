/**
 * Figure 5b: what a client sends to resume a parked turn, at 10, 100 and 1,000 messages of
 * conversation, against what a stateless agent library's client re-sends (the whole
 * conversation as JSON, with the pending tool call and the decision).
 *
 * turnpike turns are started with each conversation as history, parked, and approved through
 * a client whose gRPC requests are measured. Reported per length:
 *   - the approveToolCall payload (the JSON of `{approvalId, approved, approver}`), as sent and
 *     as the server recorded it in the turn's history;
 *   - the whole UpdateWorkflowExecution request on the wire (ids, names and headers included);
 *   - for honesty, the StartWorkflowExecution request of the turn: a new turn does carry the
 *     conversation once, as any stateless call would.
 */
import { gzipSync } from 'node:zlib';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { connectTemporal } from '../../connection/temporal-connection.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import type { BenchContext, Systems } from '../context.js';
import { FloorSystem } from '../floor-system.js';
import { waitFor } from '../pool.js';
import { requestSizeRecorder } from '../request-size-recorder.js';
import { ratio } from '../stats.js';
import { approvalRequest } from '../system.js';
import { TurnpikeSystem, turnInput } from '../turnpike-system.js';
import { BENCH_APPROVAL_TOOL, PARKED_PROMPT } from '../bench-tools.js';
import { buildConversation } from '../conversation.js';
import { historySize } from '../history-size.js';
import type { Message } from '../../workflows/types/index.js';

export interface PayloadAtLength {
  messages: number;
  /** Stateless library: JSON of the whole conversation at the moment of the resume. */
  statelessResendBytes: number;
  /** The same, gzip-compressed: a stateless library could compress too. */
  statelessResendGzipBytes: number;
  /** JSON of the approveToolCall argument the client sends. */
  resumePayloadBytes: number;
  /** The same payload's data as the server recorded it (WorkflowExecutionUpdateAccepted). */
  resumePayloadBytesInHistory: number;
  /** The whole UpdateWorkflowExecution request, protobuf-encoded, as sent. */
  updateRequestBytes: number;
  /** The turn's StartWorkflowExecution request: the conversation, sent once per turn. */
  startRequestBytes: number;
  /** statelessResendBytes / resumePayloadBytes. */
  statelessToTurnpike: number;
  /**
   * The completed turn's history (2 model steps): every `callModel` input carries the whole
   * conversation, so history grows with conversation length × steps.
   */
  turnHistoryProtoBytes: number;
}

export interface ResumePayloadFigures {
  turnpike: PayloadAtLength[];
  /** The floor's update carries the same request shape: the lower bound for an update-based resume. */
  floor: { resumePayloadBytes: number; updateRequestBytes: number };
  maxResumePayloadBytes: number;
  maxUpdateRequestBytes: number;
  ratio: number;
}

/** Payload data of the first update the server accepted, from the turn's history. */
async function acceptedPayloadBytes(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  for (const event of history.events ?? []) {
    const payload = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0];
    if (payload?.data) return payload.data.length;
  }
  return Number.NaN;
}

export async function measureResumePayload(context: BenchContext, systems: Systems): Promise<ResumePayloadFigures> {
  const recorder = requestSizeRecorder();
  const connection = await connectTemporal({ address: context.address, interceptors: [recorder.interceptor] });
  const client = new Client({ connection, namespace: context.namespace, dataConverter: turnpikeDataConverter });
  try {
    const turnpike = new TurnpikeSystem(client, systems.turnpike.taskQueue, systems.turnpike.worker);
    const rows: PayloadAtLength[] = [];
    for (const length of context.options.conversationLengths) {
      const history = buildConversation(length);
      const input = turnInput(PARKED_PROMPT, history);
      recorder.take('StartWorkflowExecution');
      const handle = await turnpike.start(input, `payload${length}`);
      const [startRequestBytes] = recorder.take('StartWorkflowExecution');
      const pending = await waitFor('the payload turn to park', () => turnpike.pendingCall(handle), 60_000, 100);
      const { approvalId, toolCallId } = pending as { approvalId: string; toolCallId: string };
      recorder.take('UpdateWorkflowExecution');
      await turnpike.approve(handle, approvalId);
      const [updateRequestBytes] = recorder.take('UpdateWorkflowExecution');
      await turnpike.finishTurn(handle, 2);

      const decision = approvalRequest(approvalId);
      // Everything a stateless client holds at this point and must send back to continue.
      const conversation: unknown[] = [
        ...input.messages,
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId, toolName: BENCH_APPROVAL_TOOL, input: { i: 1 } }] } satisfies Message,
        { decision },
      ];
      const statelessResendBytes = Buffer.byteLength(JSON.stringify(conversation));
      const resumePayloadBytes = Buffer.byteLength(JSON.stringify(decision));
      rows.push({
        messages: length,
        statelessResendBytes,
        statelessResendGzipBytes: gzipSync(JSON.stringify(conversation)).length,
        resumePayloadBytes,
        resumePayloadBytesInHistory: await acceptedPayloadBytes(handle),
        updateRequestBytes,
        startRequestBytes,
        statelessToTurnpike: statelessResendBytes / resumePayloadBytes,
        turnHistoryProtoBytes: (await historySize(handle)).protoBytes,
      });
    }

    const floorSystem = new FloorSystem(client, systems.floor.taskQueue, systems.floor.worker);
    const floorHandle = await floorSystem.startParkedTurn();
    const floorId = await waitFor('the floor payload turn to park', () => floorSystem.approvalIdOf(floorHandle), 60_000, 100);
    recorder.take('UpdateWorkflowExecution');
    await floorSystem.approve(floorHandle, floorId);
    const [floorUpdateBytes] = recorder.take('UpdateWorkflowExecution');
    await floorSystem.finishTurn(floorHandle, 2);
    const floor = { resumePayloadBytes: Buffer.byteLength(JSON.stringify(approvalRequest(floorId))), updateRequestBytes: floorUpdateBytes };

    const maxResumePayloadBytes = Math.max(...rows.map((row) => row.resumePayloadBytes));
    return {
      turnpike: rows,
      floor,
      maxResumePayloadBytes,
      maxUpdateRequestBytes: Math.max(...rows.map((row) => row.updateRequestBytes)),
      ratio: ratio(maxResumePayloadBytes, floor.resumePayloadBytes),
    };
  } finally {
    await connection.close();
  }
}
