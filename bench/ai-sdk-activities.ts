/**
 * The benchmark's two tools as activities for the `@temporalio/ai-sdk` worker: the AI SDK
 * `tool()`s in workflows.ts call these. Both return their input at once, as turnpike's
 * (bench-tools.ts) and the floor's do.
 */
export function createAiSdkActivities() {
  return {
    async benchTool({ i }: { i: number }): Promise<{ i: number }> {
      return { i };
    },
    async benchApproval({ i }: { i: number }): Promise<{ i: number }> {
      return { i };
    },
  };
}

export type AiSdkActivities = ReturnType<typeof createAiSdkActivities>;
