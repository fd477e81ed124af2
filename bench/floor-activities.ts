/**
 * The floor's activities: the same names and kinds as turnpike's turn activities, each returning
 * at once with a tiny payload.
 */
export function createFloorActivities() {
  return {
    /** Mirrors turnpike's `callModel` activity: one per step; the last step answers. */
    async callModel({ step, last }: { step: number; last: boolean; messages?: unknown[] }): Promise<{ step: number; last: boolean }> {
      return { step, last };
    },
    /** Mirrors turnpike's `executeTool` activity: one per tool call. */
    async executeTool({ i }: { i: number }): Promise<number> {
      return i;
    },
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
