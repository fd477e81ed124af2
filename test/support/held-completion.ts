/**
 * Holds the workflow task that completes a turn, so that a message can reach the turn while it
 * closes, as a double click does in production.
 *
 * The Worker answers a workflow task only after it has run the task's sink calls, and the SDK's
 * workflow logger writes `Workflow completed` through its logger sink in the task that completes
 * the workflow. `completionGate().sinks` (the Worker's `sinks`) replaces that sink with one that
 * waits, for the turns `hold` names, until the test releases it: meanwhile the turn's completion
 * has not reached Temporal, so an update sent then is admitted and waits for a task that closes
 * the turn instead. A workflow task times out after 10 seconds; a test releases well before.
 *
 * `updateSpy()` is a gRPC interceptor for the Connection of the client that sends the update: it
 * tells when an `UpdateWorkflowExecution` request was sent in full.
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Runtime, type InjectedSinks, type LoggerSinks } from '@temporalio/worker';

export interface HeldCompletion {
  /** Resolves once the turn's completing task is held. */
  held: Promise<void>;
  release(): void;
}

export interface CompletionGate {
  /** The Worker's `sinks`: the SDK's workflow logger, through the gate. */
  sinks: InjectedSinks<LoggerSinks>;
  /** Holds the completing workflow task of `workflowId`, once. */
  hold(workflowId: string): HeldCompletion;
  /** Releases every hold (for a test's cleanup). */
  releaseAll(): void;
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export function completionGate(): CompletionGate {
  const holds = new Map<string, { entered: () => void; released: Promise<void>; release: () => void }>();
  const level = (name: Level) => ({
    fn: async (info: { workflowId: string }, message: string, attributes?: Record<string, unknown>) => {
      const hold = holds.get(info.workflowId);
      if (hold && message === 'Workflow completed') {
        holds.delete(info.workflowId);
        hold.entered();
        await hold.released;
      }
      Runtime.instance().logger.log(name.toUpperCase() as Uppercase<Level>, message, { ...attributes, workflowId: info.workflowId });
    },
  });
  return {
    // `defaultWorkerLogger` is the name the SDK takes for its logger sink (`__temporal_logger` is reserved).
    sinks: { defaultWorkerLogger: { trace: level('trace'), debug: level('debug'), info: level('info'), warn: level('warn'), error: level('error') } } as unknown as InjectedSinks<LoggerSinks>,
    hold(workflowId) {
      let entered!: () => void;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (entered = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.set(workflowId, { entered, released, release });
      return { held, release };
    },
    releaseAll() {
      for (const hold of holds.values()) hold.release();
      holds.clear();
    },
  };
}

export interface UpdateSpy {
  interceptor: Interceptor;
  /** Resolves when the next `UpdateWorkflowExecution` request on the spied Connection has been sent in full. */
  sent(): Promise<void>;
}

export function updateSpy(): UpdateSpy {
  const waiting: Array<() => void> = [];
  const interceptor: Interceptor = (options, nextCall) => {
    if (!options.method_definition.path.endsWith('/UpdateWorkflowExecution')) return new InterceptingCall(nextCall(options));
    return new InterceptingCall(nextCall(options), {
      halfClose: (next) => {
        next();
        waiting.splice(0).forEach((sent) => sent());
      },
    });
  };
  return { interceptor, sent: () => new Promise<void>((resolve) => waiting.push(resolve)) };
}
