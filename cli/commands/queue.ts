/**
 * `queue backlog`: the tasks that wait on the turns' task queue and the model queue, the check
 * before turning Temporal's fairness on for a live queue on server 1.29.1, where a backlog present
 * at the switch is stranded (docs/tenants-and-capacity.md, "Caution on server 1.29.1"). Exits 5
 * when any task waits, so a script can gate the change on it.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { taskQueueBacklog, type TaskQueueBacklog } from '../../client/queue-backlog.js';
import type { CliContext } from '../context.js';
import { formatDuration, table } from '../format.js';

/** Tasks wait on a queue `queue backlog` read: exit code 5 (`EXIT_CODES.backlog`). */
export class QueueBacklogError extends Error {
  override name = 'QueueBacklogError';
}

function parseQueue(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected a task queue name, not an empty one');
  return value;
}

export function registerQueueCommands(program: Command, context: CliContext): void {
  const queue = program.command('queue').description('the workers\' task queues as the Temporal server holds them');

  queue
    .command('backlog')
    .description('tasks waiting on the turns\' queue and the model queue (the check before turning fairness on); exits 5 when any wait')
    .argument('[queues...]', 'task queues to read (default: the turns\' queue, and the model queue when TURNPIKE_MODEL_TASK_QUEUE names one)', (value: string, queues: string[] = []) => [...queues, parseQueue(value)])
    .addHelpText(
      'after',
      `
Counts the workflow and activity tasks no worker has taken yet, as the server reports them
(DescribeTaskQueue stats, approximate). On Temporal server 1.29.1, turning fairness on for a
queue strands the tasks waiting on it at that moment: run this first, and switch only when it
exits 0. A queue no worker polls shows 0 pollers: check its name.`,
    )
    .action(async (queues: string[] | undefined) => {
      const turnpike = await context.client();
      const names = queues && queues.length > 0 ? queues : [...new Set([turnpike.taskQueue, ...(turnpike.modelTaskQueue ? [turnpike.modelTaskQueue] : [])])];
      const backlogs = await Promise.all(names.map((name) => taskQueueBacklog(turnpike.client, name)));
      context.print(backlogs, () => backlogTable(backlogs, context));
      // With --json, stderr holds only the error: `pollers: 0` is in the answer.
      for (const { taskQueue, pollers } of context.json ? [] : backlogs) {
        if (pollers === 0) context.note(`no worker has polled ${taskQueue} lately: is the name right, and are the workers running?`);
      }
      const waiting = backlogs.filter(({ workflowTasks, activityTasks }) => workflowTasks + activityTasks > 0);
      if (waiting.length > 0) {
        const named = waiting.map(({ taskQueue, workflowTasks, activityTasks }) => `${taskQueue} (${workflowTasks} workflow, ${activityTasks} activity)`).join(', ');
        throw new QueueBacklogError(`tasks wait on ${named}: turning fairness on now would strand them (server 1.29.1); let the workers drain them first`);
      }
    });
}

function backlogTable(backlogs: TaskQueueBacklog[], context: CliContext): string {
  const { colors } = context;
  const rows = backlogs.map(({ taskQueue, workflowTasks, activityTasks, oldestTaskAgeMs, pollers }) => {
    const count = (tasks: number) => (tasks > 0 ? colors.yellow(String(tasks)) : String(tasks));
    return [taskQueue, count(workflowTasks), count(activityTasks), oldestTaskAgeMs > 0 ? formatDuration(oldestTaskAgeMs) : '-', pollers > 0 ? String(pollers) : colors.dim('0')];
  });
  return table(colors, ['task queue', 'workflow tasks', 'activity tasks', 'oldest waits', 'pollers'], rows);
}
