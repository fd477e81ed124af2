/**
 * What a call of a remote A2A agent is given: the agent's card as published, and the settings a
 * tool defined with `defineA2aAgentTool` (a2a-agent-tool.ts) hands to the call's activity
 * (a2a-remote-call.ts). Types only.
 */

/** An Agent Card as published (the JSON of `/.well-known/agent-card.json`); only what turnpike reads is typed. */
export interface A2aAgentCard {
  /** The agent's name. */
  name: string;
  /** What the agent does: the tool's description unless the tool gives its own. */
  description?: string;
  /** Where the agent is served; the tool speaks the `JSONRPC` binding. */
  supportedInterfaces?: Array<{ url: string; protocolBinding: string; protocolVersion?: string; tenant?: string }>;
  /** The card's other fields, as A2A 1.0 defines them. */
  [field: string]: unknown;
}

/** The settings of a remote agent's calls, as the call's activity reads them. */
export interface A2aRemoteSettings {
  toolName: string;
  url?: string;
  card?: A2aAgentCard;
  fetch?: typeof fetch;
  prompt: (input: unknown) => string;
  /** Who answers the remote task's `input-required`: the calling model (the call's result), or a person (a question parked in the turn). */
  inputRequired: 'model' | 'person';
  pollIntervalMs: number;
  timeoutMs: number;
}
