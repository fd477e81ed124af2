/**
 * Shapes of the messages a running turn accepts. Updates and signals can come from anything
 * (a dashboard, `temporal workflow signal --input '...'`), so every field is checked before
 * the turn looks at it; field sizes first (`field-limits.ts`), then these shapes.
 */
import { z } from 'zod';
import { MAX_ID, MAX_PAYLOAD_BYTES, MAX_TEXT } from './field-limits.js';
import { MODEL_PROVIDERS } from './model-providers.js';

export { MAX_PAYLOAD_BYTES, MAX_TEXT };

/**
 * A schema built on first use, not when the module loads. With `reuseV8Context` every cached turn
 * evaluates this module for itself, and zod schemas are heavy (about 12 KB each): built eagerly,
 * they were half of what a parked turn costs a worker, though most parked turns never get a
 * message that needs them.
 */
function lazy<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

export const approveToolCallInputSchema = lazy(() =>
  z.object({
    approvalId: z.string().min(1).max(MAX_ID),
    approved: z.boolean(),
    reason: z.string().max(MAX_TEXT).optional(),
    approver: z.string().min(1).max(MAX_ID).optional(),
    approverGroups: z.array(z.string().min(1).max(MAX_ID)).max(200).optional(),
    input: z.unknown().optional(),
    inputHash: z.string().max(MAX_ID).optional(),
  }),
);

/** `delegateApproval`: hand a parked call to named approvers or groups, with a reason. */
export const delegateApprovalInputSchema = lazy(() =>
  z.object({
    approvalId: z.string().min(1).max(MAX_ID),
    approver: z.string().min(1).max(MAX_ID).optional(),
    approverGroups: z.array(z.string().min(1).max(MAX_ID)).max(200).optional(),
    to: z
      .object({
        approvers: z.array(z.string().min(1).max(MAX_ID)).max(20).optional(),
        approverGroups: z.array(z.string().min(1).max(MAX_ID)).max(20).optional(),
      })
      .refine((to) => (to.approvers?.length ?? 0) + (to.approverGroups?.length ?? 0) > 0, 'names no approver and no group'),
    reason: z.string().min(1).max(MAX_TEXT),
  }),
);

export const submitToolResultInputSchema = lazy(() =>
  z.object({
    toolCallId: z.string().min(1).max(MAX_ID),
    output: z.unknown(),
    isError: z.boolean().optional(),
  }),
);

/** The longest a shape error's description gets: a refusal says what is wrong, not what was sent. */
const MAX_SHAPE_ERROR = 1_000;

/**
 * One line, for an error message: `approved: Invalid input: expected boolean, received string`.
 * Never quotes the message: a path shows only keys that read as field names (at most 64
 * characters, letters, digits, `_` and `-`) and array indexes, anything else as `…`; an
 * unrecognized key is counted, not named; zod's other messages name types and the schema's own
 * values only. Capped at 1,000 characters.
 */
export function describeShapeError(error: z.ZodError): string {
  const text = error.issues
    .map((issue) => {
      const path = issue.path.map((segment) => (typeof segment === 'number' || (typeof segment === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(segment)) ? String(segment) : '…'));
      const message = issue.code === 'unrecognized_keys' ? `${issue.keys.length} unrecognized key${issue.keys.length === 1 ? '' : 's'}` : issue.message;
      return `${path.join('.') || '(message)'}: ${message}`;
    })
    .join('; ');
  return text.length > MAX_SHAPE_ERROR ? `${text.slice(0, MAX_SHAPE_ERROR)}…` : text;
}

export const supersedeTurnInputSchema = lazy(() =>
  z.object({
    reason: z.string().min(1).max(MAX_TEXT),
    messageId: z.string().max(MAX_ID).optional(),
  }),
);

/** `toolServersUnavailable`, from a model step's activity (internal, but a signal anyone may send). */
export const toolServersWaitSchema = lazy(() =>
  z.object({
    step: z.number().int().min(1),
    attempt: z.number().int().min(1),
    servers: z
      .array(z.object({ server: z.string().min(1).max(MAX_ID), error: z.string().max(MAX_TEXT), since: z.string().max(MAX_ID), giveUpAt: z.string().max(MAX_ID) }))
      .min(1)
      .max(100),
  }),
);

/**
 * Parts a conversation message may carry after its text: text, images and documents. Only their
 * outline is checked here; what an image or document must hold is `binaryPartsProblem`'s to say.
 */
const userContentPartSchema = lazy(() =>
  z.union([
  z.object({ type: z.literal('text'), text: z.string().max(32_000) }),
  z.looseObject({ type: z.literal('image'), source: z.unknown() }),
  z.looseObject({ type: z.literal('document'), source: z.unknown() }),
  ]),
);

/** A message's own turn settings (`TurnOptions`). */
const turnOptionsSchema = lazy(() =>
  z
    .object({
      model: z.object({ provider: z.enum(MODEL_PROVIDERS), model: z.string().min(1) }).loose().optional(),
      system: z.string().max(32_000).optional(),
      tools: z.array(z.string()).optional(),
      maxSteps: z.number().int().positive().optional(),
      approvalTimeout: z.string().optional(),
      clientToolTimeout: z.string().optional(),
    })
    .loose(),
);

export const sendMessageInputSchema = lazy(() =>
  z.object({
    text: z.string().min(1).max(32_000),
    content: z.array(userContentPartSchema()).min(1).max(100).optional(),
    messageId: z.string().min(1).max(200).optional(),
    policy: z.enum(['queue', 'supersede']).optional(),
    options: turnOptionsSchema().optional(),
    // A typed answer for this message's turn; the spec itself is checked by `outputSpecProblem`.
    output: z.looseObject({ schema: z.record(z.string(), z.unknown()) }).optional(),
  }),
);

export const regenerateInputSchema = lazy(() => z.object({ turn: z.string().min(1).max(MAX_ID).optional(), options: turnOptionsSchema().optional() }));

export const editMessageInputSchema = lazy(() =>
  z.object({
    messageId: z.string().min(1).max(200),
    text: z.string().min(1).max(32_000),
    content: z.array(userContentPartSchema()).min(1).max(100).optional(),
    newMessageId: z.string().min(1).max(200).optional(),
    options: turnOptionsSchema().optional(),
  }),
);

export const switchBranchInputSchema = lazy(() => z.object({ branch: z.string().min(1).max(MAX_ID) }));

export const turnFinishedInputSchema = lazy(() =>
  z.object({
    turnWorkflowId: z.string().min(1),
    result: z.object({ messages: z.array(z.unknown()) }).loose().optional(),
    failure: z.string().optional(),
    // A failed turn's spend is added to its conversation's: numbers, or the signal is ignored.
    spend: z
      .object({
        inputTokens: z.number().int().nonnegative(),
        outputTokens: z.number().int().nonnegative(),
        costUsd: z.number().nonnegative().optional(),
        costUnknown: z.boolean().optional(),
        wallTimeMs: z.number().nonnegative(),
        toolCalls: z.number().int().nonnegative(),
      })
      .optional(),
    budget: z.object({}).loose().optional(),
  }),
);
