/**
 * What one workflow instance costs the workflow thread before its code runs: with
 * `reuseV8Context` (the SDK's default) the bundle is loaded once, but every workflow evaluates
 * its own copy of each module that is not preloaded, so module-level state (schemas, tables,
 * singletons) is paid once per cached workflow and becomes garbage at each eviction.
 *
 * Run in a child process of its own (`--expose-gc`), through the SDK's reusable-VM workflow
 * creator (an internal module of `@temporalio/worker`): `N` instances are created after a
 * warm-up one, and the live heap they add after a full GC is divided by `N`.
 *
 *   node --expose-gc --import tsx bench/workflow-instance-heap.ts <bundle.js> <workflowType>
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TypedSearchAttributes } from '@temporalio/common';

const INSTANCES = 200;
const SELF = fileURLToPath(import.meta.url);

/** Heap per instance in KB, measured in a fresh process. */
export async function workflowInstanceHeapKB(bundlePath: string, workflowType: string): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', SELF, bundlePath, workflowType], { encoding: 'utf8' });
  return Number(stdout.trim().split('\n').at(-1));
}

/**
 * The SDK's reusable V8 context for a bundle, as a worker with `reuseV8Context` (the default)
 * builds it (`ReusableVMWorkflowCreator`, an internal module of `@temporalio/worker`).
 */
export async function reusableWorkflowContext(code: string) {
  const { parseWorkflowCode } = await import('@temporalio/worker/lib/worker.js');
  const { ReusableVMWorkflowCreator } = await import('@temporalio/worker/lib/workflow/reusable-vm.js');
  return ReusableVMWorkflowCreator.create(parseWorkflowCode(code), 5_000, new Set<string>(), undefined);
}

/** A new workflow `workflowType` in that context, before any activation runs its code. */
export async function createWorkflowInstance(context: Awaited<ReturnType<typeof reusableWorkflowContext>>, runId: string, workflowType: string) {
  return context.createWorkflow({
    info: {
      workflowId: runId,
      runId,
      workflowType,
      searchAttributes: {},
      typedSearchAttributes: new TypedSearchAttributes(),
      taskQueue: 'bench',
      namespace: 'default',
      firstExecutionRunId: runId,
      originalExecutionRunId: runId,
      startTime: new Date(0),
      runStartTime: new Date(0),
      taskTimeoutMs: 10_000,
      attempt: 1,
      historyLength: 1,
      historySize: 0,
      continueAsNewSuggested: false,
      currentBuildId: '',
      unsafe: { now: () => 0, isReplaying: false, isReplayingHistoryEvents: false, random: Math.random },
      priority: {},
    } as never,
    randomnessSeed: [1, 2, 3, 4],
    now: 0,
    showStackTraceSources: false,
    failureExceptionTypeNames: [],
  } as never);
}

async function measure(bundlePath: string, workflowType: string): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const creator = await reusableWorkflowContext(readFileSync(bundlePath, 'utf8'));
  const create = (i: number) => createWorkflowInstance(creator, `r${i}`, workflowType);
  await create(-1);
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = [];
  for (let i = 0; i < INSTANCES; i++) kept.push(await create(i));
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  return (after - before) / kept.length / 1024;
}

if (process.argv[1] === SELF) {
  const [bundlePath, workflowType] = process.argv.slice(2);
  console.log(String(await measure(bundlePath!, workflowType!)));
}
