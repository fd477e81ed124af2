/**
 * The HTTP API's request shapes, checked by fastify with zod before a route runs: a malformed
 * body, parameter or query string is a 400 naming the field. The turn and the conversation check
 * what they alone can (a schema, a budget, agents), and refuse it with their own message.
 */
import { placementProblem, TURN_PRIORITIES, type TurnPriority } from '../client/tenants.js';
import { z } from 'zod';
import { MAX_PAGE_LIMIT, parseParkedCursor } from '../client/expiry-pages.js';
import { MODEL_PROVIDERS } from '../workflows/messages/model-providers.js';
import { gradersProblem } from '../workflows/evaluation/grader-types.js';

/** A turn's model (`ModelSettings`); for `ai-sdk`, `model` is a name the worker registered. */
export const modelSchema = z.looseObject({ provider: z.enum(MODEL_PROVIDERS), model: z.string().min(1) });
const messageSchema = z.looseObject({ role: z.enum(['user', 'assistant', 'tool']), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) });

/** A typed final answer (`AgentTurnInput.output`, docs/typed-output.md); the turn checks the schema itself. */
export const outputSchema = z.strictObject({
  schema: z.record(z.string(), z.unknown()),
  name: z.string().max(64).optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
});

/** A start's tenant (only an admin's body may name one: api/tenant-binding.ts) and priority (client/tenants.ts). */
const placementFields = {
  tenant: z.string().min(1).max(200).optional(),
  priority: z.enum(Object.keys(TURN_PRIORITIES) as [TurnPriority, ...TurnPriority[]], { error: (issue) => `unknown priority ${JSON.stringify(issue.input)}; use one of ${Object.keys(TURN_PRIORITIES).join(', ')}` }).optional(),
};

export const startTurnBody = z.object({
  turnId: z.string().min(1).max(200),
  ...placementFields,
  input: z.looseObject({
    model: modelSchema,
    messages: z.array(messageSchema).min(1),
    system: z.string().optional(),
    tools: z.array(z.string()).optional(),
    maxSteps: z.number().int().positive().optional(),
    approvalTimeout: z.string().optional(),
    clientToolTimeout: z.string().optional(),
    conversationId: z.string().optional(),
    output: outputSchema.optional(),
  }),
});

export const decisionBody = z.strictObject({
  approved: z.boolean(),
  reason: z.string().max(4_000).optional(),
  input: z.unknown().optional(),
  /** The hash of the input the approver saw, from the listing. */
  inputHash: z.string().max(200).optional(),
  /** Required when the server signs decisions. */
  decisionToken: z.string().max(200).optional(),
});

/** A delegation: to whom (named approvers or groups) and why; the delegator is the caller. */
export const delegationBody = z.strictObject({
  to: z.strictObject({ approvers: z.array(z.string().min(1).max(200)).max(20).optional(), approverGroups: z.array(z.string().min(1).max(200)).max(20).optional() }),
  reason: z.string().min(1).max(4_000),
});

export const toolResultBody = z.strictObject({ output: z.unknown(), isError: z.boolean().optional() });

export const sendMessageBody = z.strictObject({
  text: z.string().min(1).max(32_000),
  ...placementFields,
  /** Images, documents and further text after `text`; the conversation checks them (see `SendMessageInput.content`). */
  content: z.array(z.looseObject({ type: z.enum(['text', 'image', 'document']) })).min(1).max(100).optional(),
  messageId: z.string().min(1).max(200).optional(),
  policy: z.enum(['queue', 'supersede']).optional(),
  model: modelSchema.optional(),
  system: z.string().optional(),
  /** The conversation's agents and the one that answers first (see docs/conversations.md, "Handoffs"); the conversation checks them. */
  agents: z
    .record(
      z.string(),
      z.strictObject({
        model: modelSchema,
        system: z.string().optional(),
        tools: z.array(z.string()).optional(),
        handoffs: z.array(z.string()).optional(),
        description: z.string().optional(),
      }),
    )
    .optional(),
  agent: z.string().optional(),
  /** A typed final answer for this message's turn only. */
  output: outputSchema.optional(),
  /** The conversation's budget, when this message starts it (docs/budgets.md); the conversation checks it. */
  budget: z.record(z.string(), z.unknown()).optional(),
});

export const turnParams = z.object({ turnId: z.string().min(1) });

/** A listing's `?tenant=`: a tenant a turn could carry (at most 64 bytes), checked as the client checks a start's. */
const tenantFilter = z
  .string()
  .min(1)
  .max(200)
  .superRefine((tenant, context) => {
    const problem = placementProblem({ tenant });
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .optional();

export const decisionsQuery = z.object({
  /** Only decisions on turns of this tenant; a caller bound to a tenant may name only its own. */
  tenant: tenantFilter,
  tool: z.string().min(1).optional(),
  approver: z.string().min(1).optional(),
  since: z.iso.datetime().optional(),
  until: z.iso.datetime().optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  format: z.enum(['json', 'jsonl']).optional(),
});
/** The dashboards' live listing: its stream token, and the same `?tenant=` as the listing's. */
export const approvalsEventsQuery = z.object({
  token: z.string().max(4_000).optional(),
  /** Only calls of turns of this tenant; a caller bound to a tenant may name only its own. */
  tenant: tenantFilter,
});
export const listingQuery = z.object({
  /** Only calls of turns of this tenant; a caller bound to a tenant may name only its own. */
  tenant: tenantFilter,
  tool: z.string().min(1).optional(),
  conversation: z.string().min(1).optional(),
  /** Only calls waiting at least this long. */
  minAgeSeconds: z.coerce.number().int().min(0).optional(),
  /** Turns per page, soonest-expiring first (their calls together); `buildApi({ listingLimit })`, 5,000, when not given. */
  limit: z.coerce.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(MAX_PAGE_LIMIT, `limit must be at most ${MAX_PAGE_LIMIT}`).optional(),
  /** The `next` of the page before. */
  after: z
    .string()
    .max(2_000)
    .refine((cursor) => parseParkedCursor(cursor) !== undefined, 'after must be the `next` of a page of GET /api/approvals')
    .optional(),
});

/** The turns an evaluation may take at most (`MAX_EVALUATION_TURNS`), as a list or from a query. */
const MAX_TURNS = 1_000;

/** `POST /api/evaluations` (docs/evaluations.md, "Over the HTTP API"): the turns, by list or query, and the change. */
export const startEvaluationBody = z
  .strictObject({
    turnIds: z.array(z.string().min(1).max(400)).min(1, 'turnIds must name at least one turn').max(MAX_TURNS, `at most ${MAX_TURNS} turns per evaluation`).optional(),
    query: z.string().min(1).max(4_000).optional(),
    change: z.strictObject({
      model: modelSchema.optional(),
      system: z.string().max(32_000).optional(),
      tools: z.array(z.string().min(1).max(200)).max(500).optional(),
      output: outputSchema.nullable().optional(),
      maxSteps: z.number().int().min(1).max(1_000).optional(),
    }),
    fromStep: z.number().int().min(0).optional(),
    concurrency: z.number().int().min(1).max(100).optional(),
    budget: z.strictObject({ tokens: z.number().positive().optional(), costUsd: z.number().positive().optional() }).optional(),
    /** docs/evaluations.md, "Graders": registered functions by name, models with a rubric; checked as `evaluate` checks them. */
    graders: z
      .array(z.unknown())
      .superRefine((graders, context) => {
        const problem = gradersProblem(graders);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    /** Most turns a query takes (default and most 1,000). */
    limit: z.number().int().min(1).max(MAX_TURNS).optional(),
    /** Temporal's priority of the run and its evaluation turns (`batch` by default); the tenant is the caller's own. */
    priority: z.enum(['interactive', 'normal', 'batch']).optional(),
  })
  .refine((body) => (body.turnIds === undefined) !== (body.query === undefined), { message: 'give exactly one of turnIds and query' });

export const evaluationParams = z.object({ evaluationId: z.string().min(1).max(400) });
