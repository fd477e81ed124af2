/**
 * Tool input types flow from the zod schema into `execute` and `approval` at the call site.
 * The `expectTypeOf` assertions are checked by `tsc --noEmit` (npm run typecheck, CI); the
 * `@ts-expect-error` lines fail the type-check if a wrong use ever compiles.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineClientTool, defineTool, type ServerTool, type ToolExecutionContext } from '../../index.js';

describe('tool types', () => {
  it('gives execute and the approval policy the parsed input type of the schema', () => {
    const transfer = defineTool({
      name: 'transfer',
      description: 'Move money',
      inputSchema: z.object({ from: z.string(), amount: z.coerce.number(), memo: z.string().default('') }),
      outputSchema: z.object({ ok: z.boolean() }),
      approval: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ from: string; amount: number; memo: string }>();
        return input.amount < 100 ? 'approved' : { decision: 'user-approval', reason: 'large' };
      },
      execute: async (input, context) => {
        expectTypeOf(input).toEqualTypeOf<{ from: string; amount: number; memo: string }>();
        expectTypeOf(context).toEqualTypeOf<ToolExecutionContext>();
        return { ok: true };
      },
    });
    expectTypeOf(transfer).toExtend<ServerTool>();
    expect(transfer.kind).toBe('server');

    defineTool({
      name: 'typed_output',
      description: 'Returns what its output schema says',
      inputSchema: z.object({ id: z.string() }),
      outputSchema: z.object({ ok: z.boolean() }),
      // @ts-expect-error the output schema wants { ok: boolean }
      execute: async () => ({ ok: 'yes' }),
    });

    defineTool({
      name: 'typed_input',
      description: 'Reads a field its schema has not got',
      inputSchema: z.object({ id: z.string() }),
      // @ts-expect-error `amount` is not in the input schema
      execute: async (input) => input.amount,
    });
  });

  it('rejects a client tool with an execute function at compile time as well as at run time', () => {
    expect(() =>
      defineClientTool({
        name: 'ask',
        description: 'Ask the user',
        inputSchema: z.object({ question: z.string() }),
        // @ts-expect-error a client tool has no execute
        execute: async () => 'no',
      }),
    ).toThrow(/cannot have execute/);
  });
});
