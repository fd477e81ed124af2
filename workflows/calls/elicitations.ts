/**
 * MCP elicitations parked in a turn. While an MCP tool call runs in its activity, the server may
 * ask the user for input (`elicitation/create`). The activity parks the question here with the
 * internal `parkElicitation` update, keeps heartbeating, and waits for the answer with the
 * internal `awaitElicitationAnswer` update (or, when the turn refuses that, polls
 * `elicitationAnswer`); the answer comes like a client tool's result, by `submitToolResult` with the
 * call's `toolCallId` and `output: { action: 'accept', content } | { action: 'decline' } |
 * { action: 'cancel' }`, checked against the schema the server requested.
 *
 * A worker that dies while a question is parked takes the MCP call's connection with it; the
 * activity's retry makes a fresh call, whose question parks again under the same toolCallId and
 * replaces the old one. An answer given to the old question and not yet taken by the call it
 * belonged to is handed to the new one when the server asks the same question again.
 *
 * Deterministic code only.
 */
import * as wf from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common';
import type { z } from 'zod';
import { SchemaCache } from './call-checks.js';
import { inputHash } from '../messages/input-hash.js';
import { fieldProblem, MAX_DEPTH, MAX_PAYLOAD_BYTES } from '../messages/field-limits.js';
import { describeShapeError } from '../messages/message-schemas.js';
import { rejection } from '../messages/rejection.js';
import type { JsonSchema, PendingToolCall } from '../types/index.js';
import type { ElicitationAnswer, ElicitationAnswerState, ParkElicitationInput, ParkElicitationResult } from '../types/elicitations.js';

/**
 * Calls that may wait for their answer by `awaitElicitationAnswer` at once; more poll instead.
 * Small: the dev server and default clusters allow 10 updates in flight per workflow, shared
 * with event-stream subscribers' long polls and people's decisions.
 */
export const MAX_AWAITING_ANSWERS = 2;

export type { ElicitationAnswer, ElicitationAnswerState, ParkElicitationInput, ParkElicitationResult };

interface Elicitation {
  id: string;
  toolCallId: string;
  attempt: number;
  message: string;
  requestedSchema: JsonSchema;
  view: PendingToolCall;
  answer?: ElicitationAnswer;
  /** Why it no longer waits: answered, expired (answered `cancel`), replaced by a retry's, or its call ended. */
  closed?: 'answered' | 'expired' | 'replaced' | 'ended';
}

export class Elicitations {
  private readonly byId = new Map<string, Elicitation>();
  /** The latest question of each call. */
  private readonly latest = new Map<string, Elicitation>();
  private readonly schemas = new SchemaCache();
  /** `awaitElicitationAnswer` updates in flight. */
  private awaiting = 0;

  constructor(
    private readonly timeout: string,
    /** Called whenever the set of open questions changes (status and search attributes follow). */
    private readonly changed: () => void,
  ) {}

  /** Throws a rejection unless `toolCallId` names a call that is running now. */
  checkPark(raw: unknown, running: (toolCallId: string) => { toolName: string; input: unknown } | undefined): void {
    const request = raw as ParkElicitationInput;
    if (!request || typeof request.toolCallId !== 'string' || typeof request.message !== 'string' || typeof request.requestedSchema !== 'object' || !Number.isInteger(request.attempt)) {
      throw rejection('InvalidRequest', 'parkElicitation needs { toolCallId, attempt, message, requestedSchema }');
    }
    if (!running(request.toolCallId)) throw rejection('UnknownToolCallId', `No running tool call has this id (${request.toolCallId.length} characters)`);
    try {
      this.schemas.schemaFor(`elicitation:${JSON.stringify(request.requestedSchema)}`, withoutFormats(request.requestedSchema));
    } catch {
      // zod's message may quote the schema: the refusal does not.
      throw rejection('InvalidRequest', 'The requested schema cannot be used: zod cannot build a schema from it');
    }
  }

  park(request: ParkElicitationInput, call: { toolName: string; input: unknown }): ParkElicitationResult {
    const previous = this.latest.get(request.toolCallId);
    // The same question again from a retry (the worker died while it waited): an answer given
    // meanwhile is the person's answer to it.
    if (previous && previous.attempt !== request.attempt && previous.answer && previous.closed === 'answered' && sameQuestion(previous, request)) {
      previous.attempt = request.attempt;
      return { elicitationId: previous.id, answer: previous.answer };
    }
    if (previous && !previous.closed) previous.closed = 'replaced';
    const now = Date.now();
    const id = `eli_${wf.uuid4().replace(/-/g, '')}`;
    const elicitation: Elicitation = {
      id,
      toolCallId: request.toolCallId,
      attempt: request.attempt,
      message: request.message,
      requestedSchema: request.requestedSchema,
      view: {
        kind: 'elicitation',
        elicitationId: id,
        toolCallId: request.toolCallId,
        toolName: call.toolName,
        input: call.input,
        inputHash: inputHash(call.input),
        requestedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + msToNumber(this.timeout)).toISOString(),
        message: request.message,
        requestedSchema: request.requestedSchema,
      },
    };
    this.byId.set(id, elicitation);
    this.latest.set(request.toolCallId, elicitation);
    this.changed();
    // Expiry answers `cancel`: the server learns that nobody answered, and the call goes on.
    void wf.condition(() => elicitation.closed !== undefined, this.timeout).then((settled) => {
      if (settled) return;
      elicitation.answer = { action: 'cancel' };
      elicitation.closed = 'expired';
      this.changed();
    });
    return { elicitationId: id };
  }

  /** The open question of a call, if it has one: `submitToolResult` for it answers the question. */
  openFor(toolCallId: string): Elicitation | undefined {
    const elicitation = this.latest.get(toolCallId);
    return elicitation && !elicitation.closed ? elicitation : undefined;
  }

  /** Validates an answer (the `submitToolResult` validator); throws a rejection that says what is wrong. */
  checkAnswer(elicitation: Elicitation, output: unknown): ElicitationAnswer {
    const tooLarge = fieldProblem('The answer', output, { kind: 'json', bytes: MAX_PAYLOAD_BYTES, depth: MAX_DEPTH });
    if (tooLarge) throw rejection('PayloadTooLarge', tooLarge);
    const answer = output as { action?: unknown; content?: unknown } | null;
    const action = answer && typeof answer === 'object' ? answer.action : undefined;
    if (action === 'decline' || action === 'cancel') return { action };
    if (action !== 'accept') {
      throw rejection(
        'InvalidToolOutput',
        `Tool call ${elicitation.toolCallId} waits for an answer to "${elicitation.message}": submit output { action: 'accept', content } or { action: 'decline' } or { action: 'cancel' }`,
      );
    }
    const schema: z.ZodType = this.schemas.schemaFor(`elicitation:${JSON.stringify(elicitation.requestedSchema)}`, withoutFormats(elicitation.requestedSchema));
    const checked = schema.safeParse(answer!.content ?? {});
    if (!checked.success) {
      throw rejection('InvalidToolOutput', `The answer does not fit the requested schema: ${describeShapeError(checked.error)}`);
    }
    const badFormat = formatProblem(elicitation.requestedSchema, answer!.content as Record<string, unknown>);
    if (badFormat) throw rejection('InvalidToolOutput', `The answer does not fit the requested schema: ${badFormat}`);
    return { action: 'accept', content: answer!.content as Record<string, unknown> };
  }

  answer(elicitation: Elicitation, answer: ElicitationAnswer): void {
    if (elicitation.closed) return;
    elicitation.answer = answer;
    elicitation.closed = 'answered';
    this.changed();
  }

  /** The `elicitationAnswer` query: what the waiting call should do. */
  state(elicitationId: string): ElicitationAnswerState {
    const elicitation = this.byId.get(typeof elicitationId === 'string' ? elicitationId : '');
    if (!elicitation) return { state: 'gone', reason: 'unknown elicitation' };
    if (elicitation.answer) return { state: 'answered', answer: elicitation.answer };
    if (elicitation.closed) return { state: 'gone', reason: elicitation.closed };
    return { state: 'open' };
  }

  /** The `awaitElicitationAnswer` validator: a string id, and room for one more waiting call. */
  checkAwait(elicitationId: unknown): void {
    if (typeof elicitationId !== 'string') throw rejection('InvalidRequest', 'awaitElicitationAnswer needs an elicitationId');
    if (this.awaiting >= MAX_AWAITING_ANSWERS) throw rejection('InvalidRequest', `${MAX_AWAITING_ANSWERS} calls already wait by update: poll elicitationAnswer`);
  }

  /** The `awaitElicitationAnswer` handler: returns once the question is answered or gone. */
  async awaitAnswer(elicitationId: string): Promise<ElicitationAnswerState> {
    this.awaiting++;
    try {
      // Not cancelled with the turn: a cancelled turn ends its calls (endAll), which closes the
      // question, and this returns `gone` so the handler finishes before the turn does.
      await wf.CancellationScope.nonCancellable(() => wf.condition(() => this.state(elicitationId).state !== 'open'));
      return this.state(elicitationId);
    } finally {
      this.awaiting--;
    }
  }

  /** The call ended (its activity returned, failed or was cancelled): its question waits no more. */
  endCall(toolCallId: string): void {
    const elicitation = this.latest.get(toolCallId);
    if (elicitation && !elicitation.closed) {
      elicitation.closed = 'ended';
      this.changed();
    }
  }

  endAll(): void {
    for (const toolCallId of this.latest.keys()) this.endCall(toolCallId);
  }

  pending(): PendingToolCall[] {
    return [...this.latest.values()].filter((elicitation) => !elicitation.closed).map((elicitation) => elicitation.view);
  }

  hasOpen(): boolean {
    return this.pending().length > 0;
  }
}

/**
 * The requested schema without `format`: zod checks formats with module-level regular
 * expressions, which the workflow sandbox freezes (a check then throws on `lastIndex`), so the
 * formats MCP allows in a requested schema are checked by `formatProblem` instead.
 */
function withoutFormats(schema: JsonSchema): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).map(([key, { format: _format, ...rest }]) => [key, rest])),
  };
}

/** The first property whose string value does not have its `format` (email, uri, date, date-time). */
function formatProblem(schema: JsonSchema, content: Record<string, unknown>): string | undefined {
  // Made per call, not shared: the sandbox freezes module-level regular expressions.
  const formats: Record<string, RegExp> = {
    email: new RegExp('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$'),
    uri: new RegExp('^[a-zA-Z][a-zA-Z0-9+.-]*:[^\\s]*$'),
    date: new RegExp('^\\d{4}-\\d{2}-\\d{2}$'),
    'date-time': new RegExp('^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$'),
  };
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const value = content?.[key];
    const pattern = typeof property.format === 'string' ? formats[property.format] : undefined;
    if (pattern && typeof value === 'string' && !pattern.test(value)) return `${key}: not a valid ${property.format}`;
  }
  return undefined;
}

function sameQuestion(elicitation: Elicitation, request: ParkElicitationInput): boolean {
  return elicitation.message === request.message && JSON.stringify(elicitation.requestedSchema) === JSON.stringify(request.requestedSchema);
}

/** The shape check of an answer's envelope, for the error message of a bad `submitToolResult`. */
export type { Elicitation };
