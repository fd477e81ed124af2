/**
 * The agent tool calls of one turn whose child turn has not answered yet (agent-tool-call.ts):
 * what the turn's `turnState.children` shows, what superseding the turn cancels, and what a
 * cancelled turn waits for before it settles its calls.
 */
import * as wf from '@temporalio/workflow';
import type { ChildTurnView } from '../types/index.js';

/** A turn's agent calls whose child has not answered yet: what `turnState.children` shows, and what cancelling reaches. */
export class AgentCalls {
  private readonly running = new Map<string, { view: ChildTurnView; scope: wf.CancellationScope }>();

  /** For `turnState`: absent when no child runs. */
  state(): { children?: ChildTurnView[] } {
    return this.running.size > 0 ? { children: [...this.running.values()].map(({ view }) => ({ ...view })) } : {};
  }

  /** Superseding the turn: every child is cancelled (it settles its own open calls first). */
  cancelAll(): void {
    for (const { scope } of this.running.values()) scope.cancel();
  }

  /** Resolves once every child has answered its call: a cancelled turn waits for its children's cancellation to complete. */
  async settled(): Promise<void> {
    if (this.running.size > 0) await wf.condition(() => this.running.size === 0);
  }

  add(view: ChildTurnView, scope: wf.CancellationScope): void {
    this.running.set(view.toolCallId, { view, scope });
  }

  delete(toolCallId: string): void {
    this.running.delete(toolCallId);
  }
}
