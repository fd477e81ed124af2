/**
 * Shapes of the messages a running turn accepts. Updates and signals can come from anything
 * (a dashboard, `temporal workflow signal --input '...'`), so every field is checked before
 * the turn looks at it.
 */
import { z } from 'zod';

/** Large enough for any real decision; small enough that a hostile payload cannot bloat history. */
export const MAX_TEXT = 4_000;

export const approveToolCallInputSchema = z.object({
  approvalId: z.string().min(1).max(200),
  approved: z.boolean(),
  reason: z.string().max(MAX_TEXT).optional(),
  approver: z.string().min(1).max(200).optional(),
  input: z.unknown().optional(),
  inputHash: z.string().max(200).optional(),
});

export const submitToolResultInputSchema = z.object({
  toolCallId: z.string().min(1).max(200),
  output: z.unknown(),
  isError: z.boolean().optional(),
});

/** One line, for an error message: `approved: expected boolean, received string`. */
export function describeShapeError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(message)'}: ${issue.message}`).join('; ');
}
