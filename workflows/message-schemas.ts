/**
 * Shapes of the messages a running turn accepts. Updates and signals can come from anything
 * (a dashboard, `temporal workflow signal --input '...'`), so every field is checked before
 * the turn looks at it.
 */
import { z } from 'zod';

/** Large enough for any real decision; small enough that a hostile payload cannot bloat history. */
export const MAX_TEXT = 4_000;

/** The largest edited input or client-tool output a turn accepts, as JSON. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** JSON size in UTF-16 code units: close enough to bytes for a bound, and cheap in a validator. */
export function jsonSize(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

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
    approvalId: z.string().min(1).max(200),
    approved: z.boolean(),
    reason: z.string().max(MAX_TEXT).optional(),
    approver: z.string().min(1).max(200).optional(),
    approverGroups: z.array(z.string().min(1).max(200)).max(200).optional(),
    input: z.unknown().optional(),
    inputHash: z.string().max(200).optional(),
  }),
);

export const submitToolResultInputSchema = lazy(() =>
  z.object({
    toolCallId: z.string().min(1).max(200),
    output: z.unknown(),
    isError: z.boolean().optional(),
  }),
);

/** One line, for an error message: `approved: expected boolean, received string`. */
export function describeShapeError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(message)'}: ${issue.message}`).join('; ');
}

export const supersedeTurnInputSchema = lazy(() =>
  z.object({
    reason: z.string().min(1).max(MAX_TEXT),
    messageId: z.string().max(200).optional(),
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

export const sendMessageInputSchema = lazy(() =>
  z.object({
    text: z.string().min(1).max(32_000),
    content: z.array(userContentPartSchema()).min(1).max(100).optional(),
    messageId: z.string().min(1).max(200).optional(),
    policy: z.enum(['queue', 'supersede']).optional(),
    options: z
      .object({
        model: z.object({ provider: z.enum(['openai', 'openai-responses', 'anthropic', 'scripted']), model: z.string().min(1) }).loose().optional(),
        system: z.string().max(32_000).optional(),
        tools: z.array(z.string()).optional(),
        maxSteps: z.number().int().positive().optional(),
        approvalTimeout: z.string().optional(),
        clientToolTimeout: z.string().optional(),
      })
      .loose()
      .optional(),
  }),
);

export const turnFinishedInputSchema = lazy(() =>
  z.object({
    turnWorkflowId: z.string().min(1),
    result: z.object({ messages: z.array(z.unknown()) }).loose().optional(),
    failure: z.string().optional(),
  }),
);
