/**
 * Agent tools as the turns know them: a parent turn runs a sub-agent as a child turn.
 * Pure types: nothing here runs.
 */

/** Set by a parent on the child turn of an agent tool call. */
export interface ParentTurn {
  /** The parent turn's workflow id. */
  turnId: string;
  /** The parent's agent tool call this turn answers. */
  toolCallId: string;
  /** The agent tool names from the root turn down to this one: how deep it nests, and what would be a cycle. */
  path: string[];
}

/** A running child turn, as its parent's `turnState` shows it. */
export interface ChildTurnView {
  toolCallId: string;
  toolName: string;
  /** The child turn's workflow id (`<parent turn id>/<toolCallId>`). */
  turnId: string;
  /** 'starting' until the child workflow started, then 'running' until its result arrives (query the child for its own state). */
  status: 'starting' | 'running';
}

/** The `agentToolPrompt` activity's input: an agent tool's call, whose prompt function writes the child's user message. */
export interface AgentToolPromptInput {
  toolName: string;
  input: unknown;
}
