/**
 * Tool input types flow from the zod schema into `execute` and `approval` at the call site.
 * The `expectTypeOf` assertions are checked by `tsc --noEmit` (npm run typecheck, CI); the
 * `@ts-expect-error` lines fail the type-check if a wrong use ever compiles.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { TurnpikeClient } from '../../client/index.js';
import { defineClientTool, defineTool, type ClientToolOutput, type ServerTool, type ToolExecutionContext } from '../../index.js';

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

  it('types a client tool\'s submitted result from its output schema, and keeps the untyped form', () => {
    const askUser = defineClientTool({
      name: 'ask_user',
      description: 'Ask the user',
      inputSchema: z.object({ question: z.string() }),
      outputSchema: z.object({ answer: z.enum(['yes', 'no']), note: z.string().default('') }),
    });
    const noSchema = defineClientTool({ name: 'pick', description: 'Pick', inputSchema: z.object({ from: z.array(z.string()) }) });
    // The schema's output side, as the turn checks it: a field with a default is still sent.
    expectTypeOf<ClientToolOutput<typeof askUser>>().toEqualTypeOf<{ answer: 'yes' | 'no'; note: string }>();
    expectTypeOf<ClientToolOutput<typeof noSchema>>().toEqualTypeOf<unknown>();

    // Compiled, never called: it needs no server.
    const submit = async (turnpike: TurnpikeClient, untyped: { toolCallId: string; output: unknown; isError?: boolean }) => {
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: { answer: 'yes', note: '' } }, askUser);
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: 'the dialog was closed', isError: true }, askUser);
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: ['anything'] }, noSchema);
      await turnpike.submitToolResult('turn', untyped);
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: 42 });
      // @ts-expect-error `maybe` is not one of the schema's answers
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: { answer: 'maybe', note: '' } }, askUser);
      // @ts-expect-error `note` is missing
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: { answer: 'yes' } }, askUser);
      // @ts-expect-error only a failed call's output escapes the schema
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: 'no', isError: false }, askUser);
      // @ts-expect-error a server tool has no result to submit
      await turnpike.submitToolResult('turn', { toolCallId: 'call', output: 1 }, defineTool({ name: 's', description: 's', inputSchema: z.object({}), execute: () => 1 }));
    };
    expect(submit).toBeTypeOf('function');
  });
});
