/**
 * The floor's activities: the same four names and the same kinds (local or normal) as
 * turnpike's, each returning at once with a tiny payload.
 */
export function createFloorActivities() {
  return {
    /** Mirrors turnpike's `describeTools` local activity at the start of a turn. */
    async describeTools(): Promise<number> {
      return 0;
    },
    /** Mirrors turnpike's `callModel` activity: one per step; the last step answers. */
    async callModel({ step, last }: { step: number; last: boolean; messages?: unknown[] }): Promise<{ step: number; last: boolean }> {
      return { step, last };
    },
    /** Mirrors turnpike's `prepareToolCalls` local activity: one per tool step. */
    async prepareToolCalls({ step }: { step: number }): Promise<number> {
      return step;
    },
    /** Mirrors turnpike's `executeTool` activity: one per tool call. */
    async executeTool({ i }: { i: number }): Promise<number> {
      return i;
    },
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
