/**
 * A named agent the HTTP API publishes to other agents, over A2A (api/a2a/) or as an MCP tool
 * (api/mcp/): a turn's settings under a name. Each protocol's options take a record of them and
 * check the names the same way, so that a name fits a URL path, a tool name and a turn id.
 */
import { z } from 'zod';
import type { OutputOption } from '../client/typed-output.js';
import { MODEL_PROVIDERS } from '../workflows/messages/model-providers.js';
import type { ModelSettings } from '../workflows/types/index.js';

/** One published agent: what each of its tasks (turns) runs with. */
export interface PublishedAgent {
  /** What the agent does: the Agent Card's description, the MCP tool's description. */
  description: string;
  model: ModelSettings;
  /** The system prompt of each task's turn. */
  system?: string;
  /** Registered tool names each task's turn is offered (default: all). */
  tools?: string[];
  /** Default 10, as for any turn. */
  maxSteps?: number;
  /** How long a parked approval waits (default '24h', as for any turn); expiry is a denial. */
  approvalTimeout?: string;
  /** A typed answer (a zod or JSON Schema), where the protocol carries one. */
  output?: OutputOption;
}

/** An agent's name: 1 to 64 letters, digits, `-` and `_`. */
export const AGENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Refuses an empty set of agents, or a name a URL path, a tool or a turn id could not carry, before anything is served. */
export function checkAgentNames(protocol: 'a2a' | 'mcp', agents: Record<string, unknown>): void {
  const names = Object.keys(agents);
  if (names.length === 0) throw new Error(`buildApi ${protocol}: name at least one agent in ${protocol}.agents`);
  for (const name of names) {
    if (!AGENT_NAME.test(name)) throw new Error(`buildApi ${protocol}: agent name ${JSON.stringify(name)} must be 1 to 64 letters, digits, - or _`);
  }
}

const agentsSchema = z.record(
  z.string().regex(AGENT_NAME),
  z.object({
    description: z.string().min(1),
    model: z.object({ provider: z.enum(MODEL_PROVIDERS), model: z.string().min(1) }).loose(),
    system: z.string().optional(),
    tools: z.array(z.string().min(1)).optional(),
    maxSteps: z.number().int().positive().optional(),
    approvalTimeout: z.string().min(1).optional(),
  }).strict(),
);

/**
 * `npm run api`'s agents from environment variable `variable` (JSON, name → `{ description,
 * model: { provider, model }, system?, tools?, maxSteps?, approvalTimeout? }`; no typed answer).
 * Undefined when unset; a malformed value is refused with the variable's name and the reason.
 */
export function publishedAgentsFromEnvironment(variable: string, env: NodeJS.ProcessEnv): Record<string, PublishedAgent> | undefined {
  const raw = env[variable];
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`${variable} must be JSON: { "<name>": { "description", "model": { "provider", "model" }, "system"?, "tools"? } }`);
  }
  const agents = agentsSchema.safeParse(parsed);
  if (!agents.success) throw new Error(`${variable}: ${z.prettifyError(agents.error)}`);
  return agents.data as Record<string, PublishedAgent>;
}
