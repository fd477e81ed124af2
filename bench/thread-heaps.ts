/**
 * The V8 heaps of every thread of the worker process, read through the in-process inspector.
 *
 * A Temporal TypeScript worker runs workflow code in worker threads whose heaps
 * `process.memoryUsage()` does not show, yet they are most of the RSS that parked, cached
 * turns cost. Forcing a collection first separates live memory from garbage that V8 simply
 * has not collected yet (and pages it has not returned to the OS).
 */
import { Session } from 'node:inspector';

export interface ThreadHeap {
  /** `main`, or the worker thread's title. */
  thread: string;
  usedBytes: number;
  totalBytes: number;
}

interface InspectorReply {
  id: number;
  result?: { usedSize?: number; totalSize?: number };
}

export class ThreadHeaps {
  private session?: Session;
  private readonly workers = new Map<string, string>();
  private readonly replies = new Map<number, (reply: InspectorReply) => void>();
  private nextId = 1;

  /** Connected on first use only: an idle inspector costs nothing, but a latency run should not carry one. */
  private async connect(): Promise<Session> {
    if (this.session) return this.session;
    const session = new Session();
    session.connect();
    session.on('NodeWorker.attachedToWorker', ({ params }) => this.workers.set(params.sessionId, params.workerInfo.title));
    session.on('NodeWorker.detachedFromWorker', ({ params }) => this.workers.delete(params.sessionId));
    session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
      const reply = JSON.parse(params.message) as InspectorReply;
      this.replies.get(reply.id)?.(reply);
      this.replies.delete(reply.id);
    });
    await new Promise<void>((resolve, reject) =>
      session.post('NodeWorker.enable', { waitForDebuggerOnStart: false }, (error) => (error ? reject(error) : resolve())),
    );
    // Existing workers are announced asynchronously after `enable`.
    await new Promise((resolve) => setTimeout(resolve, 200));
    this.session = session;
    return session;
  }

  private callMain<T>(session: Session, method: string): Promise<T> {
    return new Promise((resolve, reject) => session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))));
  }

  private callWorker(session: Session, sessionId: string, method: string): Promise<InspectorReply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.replies.set(id, resolve);
      session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method }) });
    });
  }

  /** Heap of every thread; with `collect`, after a full garbage collection in each. */
  async read(collect: boolean): Promise<ThreadHeap[]> {
    const session = await this.connect();
    if (collect) {
      await this.callMain(session, 'HeapProfiler.collectGarbage');
      await Promise.all([...this.workers.keys()].map((id) => this.callWorker(session, id, 'HeapProfiler.collectGarbage')));
    }
    const main = await this.callMain<{ usedSize: number; totalSize: number }>(session, 'Runtime.getHeapUsage');
    const heaps: ThreadHeap[] = [{ thread: 'main', usedBytes: main.usedSize, totalBytes: main.totalSize }];
    for (const [id, title] of this.workers) {
      const { result } = await this.callWorker(session, id, 'Runtime.getHeapUsage');
      heaps.push({ thread: title, usedBytes: result?.usedSize ?? Number.NaN, totalBytes: result?.totalSize ?? Number.NaN });
    }
    return heaps;
  }
}
