/** `@a2a-js/sdk`'s own client, as the A2A tests drive turnpike's endpoint with it, and what they read of its answers. */
import type { Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { expect } from 'vitest';
import type { Message } from '@a2a-js/sdk';

/** The SDK's JSON-RPC client for the agent card at `agentUrl`, sending `Authorization: Bearer <token>`. */
export function a2aClient(agentUrl: string, token: string): Promise<Client> {
  const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } });
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] }).createFromUrl(agentUrl);
}

/** Sends a message and expects a task back (not a message). */
export async function sendTask(client: Client, sent: Message): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: sent, configuration: undefined, metadata: undefined });
  expect('status' in result).toBe(true);
  return result as Task;
}

/** The text of a task's artifacts. */
export function answerText(task: Task): string {
  return task.artifacts.flatMap((artifact) => artifact.parts).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

/** The error the client threw, by the protocol's name and JSON-RPC code. */
export async function refusal(work: Promise<unknown>): Promise<{ name: string; code?: number; message: string }> {
  const error = await work.then(() => undefined, (caught: unknown) => caught as { name: string; code?: number; message: string });
  expect(error).toBeDefined();
  return error!;
}
