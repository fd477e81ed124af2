/** Whether a workflow of this id exists on the server (any run, open or closed), from its description. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';

export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
