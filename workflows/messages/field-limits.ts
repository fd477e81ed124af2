/**
 * Size limits of every field of the messages a turn accepts, checked before anything else looks
 * at a message (before its shape, before the turn's ledger). A refusal names the field and its
 * size, never its value: nothing of a message a turn refuses is copied into what the turn sends
 * back (the update's rejection, a log line).
 *
 * Sizes are in UTF-16 code units, as JavaScript counts them: characters for text, and close to
 * bytes for JSON. The README's "Message limits" table lists the same numbers.
 *
 * Deterministic and iterative: a value nested a million levels deep is measured without
 * recursion, and measuring stops as soon as a limit is passed.
 */

/** A text field: at most `chars` characters. */
export interface TextLimit {
  kind: 'text';
  chars: number;
}

/** A list of text: at most `items` entries of at most `chars` characters each. */
export interface ListLimit {
  kind: 'list';
  items: number;
  chars: number;
}

/** Any JSON value: at most `bytes` as JSON, nested at most `depth` levels. */
export interface JsonLimit {
  kind: 'json';
  bytes: number;
  depth: number;
}

export type FieldLimit = TextLimit | ListLimit | JsonLimit;

/** Reasons, decisions, a superseding message's reason: large enough for any real one. */
export const MAX_TEXT = 4_000;
/** Ids, approver names and groups, hashes. */
export const MAX_ID = 200;
/** An edited input, a client tool's output, an answer to an MCP server's question. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** How deeply an edited input or a client tool's output may nest (objects and arrays). */
export const MAX_DEPTH = 64;
/** A whole message as JSON, unknown fields included: the largest payload field plus the rest. */
export const MAX_MESSAGE_BYTES = 320 * 1024;

const text = (chars: number): TextLimit => ({ kind: 'text', chars });
const json = (bytes: number, depth: number): JsonLimit => ({ kind: 'json', bytes, depth });

/** The limits of each message a turn takes, field by field. */
export const MESSAGE_LIMITS = {
  approveToolCall: {
    approvalId: text(MAX_ID),
    reason: text(MAX_TEXT),
    approver: text(MAX_ID),
    approverGroups: { kind: 'list', items: 200, chars: MAX_ID } as ListLimit,
    inputHash: text(MAX_ID),
    input: json(MAX_PAYLOAD_BYTES, MAX_DEPTH),
  },
  delegateApproval: {
    approvalId: text(MAX_ID),
    approver: text(MAX_ID),
    approverGroups: { kind: 'list', items: 200, chars: MAX_ID } as ListLimit,
    reason: text(MAX_TEXT),
    to: json(16 * 1024, 3),
  },
  submitToolResult: {
    toolCallId: text(MAX_ID),
    output: json(MAX_PAYLOAD_BYTES, MAX_DEPTH),
  },
  supersedeTurn: {
    reason: text(MAX_TEXT),
    messageId: text(MAX_ID),
  },
  /** Internal, from the activity of an MCP call whose server asks a question. */
  parkElicitation: {
    toolCallId: text(MAX_ID),
    message: text(32_000),
    requestedSchema: json(64 * 1024, 16),
  },
  /** Internal: its argument is an elicitation id, a bare string of at most {@link MAX_ID} characters. */
  awaitElicitationAnswer: {},
  /** A query, whose failure names the id it was asked about (answered inside a workflow task's completion when one is running). */
  callContext: {
    toolCallId: text(MAX_ID),
  },
} as const satisfies Record<string, Record<string, FieldLimit>>;

export type LimitedMessage = keyof typeof MESSAGE_LIMITS;

/** How large a JSON value is, measured up to a limit. */
export interface Measure {
  /** JSON size, exact for plain ASCII text (escapes are not counted); past the limit, where measuring stopped. */
  bytes: number;
  /** Deepest nesting of objects and arrays: 0 for a scalar. */
  depth: number;
  /** Which limit the value passes, if any. */
  exceeds?: 'bytes' | 'depth';
}

/** Measures `value` as JSON without recursion, stopping at the first limit it passes. */
export function measureJson(value: unknown, maxBytes: number, maxDepth: number): Measure {
  const stack: Array<[unknown, number]> = [[value, 0]];
  let bytes = 0;
  let depth = 0;
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    if (item === null || item === undefined) bytes += 4;
    else if (typeof item === 'string') bytes += item.length + 2;
    else if (typeof item === 'number' || typeof item === 'bigint') bytes += String(item).length;
    else if (typeof item === 'boolean') bytes += item ? 4 : 5;
    else if (typeof item === 'object') {
      const inner = level + 1;
      if (inner > depth) depth = inner;
      if (depth > maxDepth) return { bytes, depth, exceeds: 'depth' };
      if (Array.isArray(item) || ArrayBuffer.isView(item)) {
        const items = item as ArrayLike<unknown>;
        bytes += 2 + Math.max(0, items.length - 1);
        if (bytes > maxBytes) return { bytes, depth, exceeds: 'bytes' };
        for (let index = items.length - 1; index >= 0; index--) stack.push([items[index], inner]);
      } else {
        const keys = Object.keys(item);
        bytes += 2 + Math.max(0, keys.length - 1);
        for (const key of keys) {
          bytes += key.length + 3;
          if (bytes > maxBytes) return { bytes, depth, exceeds: 'bytes' };
          stack.push([(item as Record<string, unknown>)[key], inner]);
        }
      }
    }
    if (bytes > maxBytes) return { bytes, depth, exceeds: 'bytes' };
  }
  return { bytes, depth };
}

/** Why `value` passes its limit (`field` names it in the message), or undefined. */
export function fieldProblem(field: string, value: unknown, limit: FieldLimit): string | undefined {
  if (value === undefined) return undefined;
  switch (limit.kind) {
    case 'text':
      return typeof value === 'string' && value.length > limit.chars ? `${field} is ${value.length} characters long; the limit is ${limit.chars}` : undefined;
    case 'list': {
      if (!Array.isArray(value)) return undefined;
      if (value.length > limit.items) return `${field} has ${value.length} entries; the limit is ${limit.items}`;
      const index = value.findIndex((entry) => typeof entry === 'string' && entry.length > limit.chars);
      return index < 0 ? undefined : `${field}[${index}] is ${(value[index] as string).length} characters long; the limit is ${limit.chars}`;
    }
    case 'json': {
      const measured = measureJson(value, limit.bytes, limit.depth);
      if (measured.exceeds === 'depth') return `${field} is nested more than ${limit.depth} levels deep`;
      return measured.exceeds === 'bytes' ? `${field} is larger than ${limit.bytes} bytes as JSON` : undefined;
    }
  }
}

/**
 * Why a message of {@link MESSAGE_LIMITS} passes one of its limits, or undefined: each known
 * field against its own limit, then the whole message (unknown fields included) against
 * {@link MAX_MESSAGE_BYTES}. A message that is a bare string (`awaitElicitationAnswer` takes an
 * id) is at most {@link MAX_ID} characters; any other message that is not an object is left to
 * the shape check, which refuses it without quoting it. Messages not in the table (a
 * conversation's) have limits of their own, in their schemas.
 */
export function messageProblem(name: string, message: unknown): string | undefined {
  if (!Object.hasOwn(MESSAGE_LIMITS, name)) return undefined;
  const limits: Record<string, FieldLimit> = MESSAGE_LIMITS[name as LimitedMessage];
  if (typeof message === 'string') return fieldProblem(name, message, text(MAX_ID));
  if (!message || typeof message !== 'object' || Array.isArray(message)) return undefined;
  for (const [field, limit] of Object.entries(limits)) {
    const problem = fieldProblem(`${name}.${field}`, (message as Record<string, unknown>)[field], limit);
    if (problem) return problem;
  }
  const whole = measureJson(message, MAX_MESSAGE_BYTES, MAX_DEPTH + 1);
  if (whole.exceeds === 'depth') return `${name} is nested more than ${MAX_DEPTH + 1} levels deep`;
  return whole.exceeds === 'bytes' ? `${name} is larger than ${MAX_MESSAGE_BYTES} bytes as JSON` : undefined;
}
