/**
 * A typed answer's type flows from the zod schema into what the client returns. The
 * `expectTypeOf` assertions are checked by `tsc --noEmit` (npm run typecheck, CI); the
 * `@ts-expect-error` lines fail the type-check if a wrong use ever compiles.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { typedOutput, type DeepPartial, type OutputOf, type OutputStreamItem, type StartTurnInput, type TurnpikeClient } from '../../client/index.js';
import type { AgentTurnResult, SendMessageInput } from '../../workflows/types/index.js';

const Trip = z.object({ city: z.string(), days: z.coerce.number(), note: z.string().default('') });
type Trip = { city: string; days: number; note: string };

describe('typed answer types', () => {
  it('gives the parsed output type of the schema to turnOutput, typedOutput and outputStream', () => {
    expectTypeOf<TurnpikeClient['turnOutput']>().toBeCallableWith('turn-1', Trip);
    expectTypeOf<Awaited<ReturnType<typeof _readTrip>>>().toEqualTypeOf<Trip>();
    const result = { status: 'completed', text: '', messages: [], steps: 1, usage: { inputTokens: 0, outputTokens: 0 }, toolCalls: [], output: { city: 'Lisbon', days: 4 } } satisfies AgentTurnResult;
    const trip = typedOutput(result, Trip);
    expectTypeOf(trip).toEqualTypeOf<Trip>();
    expect(trip).toEqual({ city: 'Lisbon', days: 4, note: '' });

    type Items = ReturnType<typeof _streamTrip> extends AsyncGenerator<infer Item> ? Item : never;
    expectTypeOf<Items>().toEqualTypeOf<OutputStreamItem<Trip>>();
    expectTypeOf<Extract<Items, { type: 'partial' }>['partial']>().toEqualTypeOf<DeepPartial<Trip>>();
    expectTypeOf<Extract<Items, { type: 'finished' }>['output']>().toEqualTypeOf<Trip | undefined>();
    // Without a schema, nothing is claimed about the output.
    type Untyped = ReturnType<typeof _streamUntyped> extends AsyncGenerator<infer Item> ? Item : never;
    expectTypeOf<Extract<Untyped, { type: 'finished' }>['output']>().toEqualTypeOf<unknown>();
    expectTypeOf<OutputOf<{ schema: typeof Trip }>>().toEqualTypeOf<Trip>();
  });

  it('takes a zod schema or a JSON Schema as a turn or message output, and nothing else', () => {
    const model = { provider: 'openai', model: 'gpt-4.1-mini' } as const;
    const messages = [{ role: 'user', content: 'Plan a trip.' }] as const;
    expectTypeOf<StartTurnInput>().toExtend<{ output?: unknown }>();
    const withZod: StartTurnInput = { model, messages: [...messages], output: { schema: Trip, maxRetries: 1 } };
    const withJson: StartTurnInput = { model, messages: [...messages], output: { schema: { type: 'object' }, name: 'trip' } };
    // @ts-expect-error a schema is a zod schema or a JSON Schema object, not a string
    const withString: StartTurnInput = { model, messages: [...messages], output: { schema: 'trip' } };
    // @ts-expect-error maxRetries is a number
    const withBadRetries: StartTurnInput = { model, messages: [...messages], output: { schema: Trip, maxRetries: 'two' } };
    // The workflow's own message takes JSON Schema only: the client converts zod.
    // @ts-expect-error SendMessageInput.output.schema is JSON Schema
    const rawZod: SendMessageInput = { text: 'hi', output: { schema: Trip } };
    expect([withZod, withJson, withString, withBadRetries, rawZod]).toHaveLength(5);
  });
});

function _readTrip(turnpike: TurnpikeClient) {
  return turnpike.turnOutput('turn-1', Trip);
}

function _streamTrip(turnpike: TurnpikeClient) {
  return turnpike.outputStream('turn-1', { schema: Trip });
}

function _streamUntyped(turnpike: TurnpikeClient) {
  return turnpike.outputStream('turn-1');
}
