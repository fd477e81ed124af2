/**
 * A child process that the cluster owns: its output goes to a log file (and the last few KB
 * are kept for error messages), it is stopped with a signal and a deadline, and it is killed
 * if this process exits without stopping it, so no test run or Ctrl-C leaves one behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface ManagedProcessOptions {
  /** Name for messages, e.g. "temporal-server". */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Appended to; created with its directory. */
  logFile: string;
  /** Run as this user (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  /**
   * Own process group, so a Ctrl-C in the terminal reaches only the cluster script, which then
   * stops the parts in order (workers before the server, the server before its database).
   */
  detached?: boolean;
}

export class ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code or signal once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private tail = '';
  private readonly logFd: number;
  private readonly killOnExit: () => void;
  private readonly lineListeners = new Set<(line: string) => void>();
  private partial = '';

  constructor(options: ManagedProcessOptions) {
    this.name = options.name;
    this.logFile = options.logFile;
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    this.logFd = openSync(options.logFile, 'a');
    writeSync(this.logFd, `\n=== ${new Date().toISOString()} ${options.command} ${options.args.join(' ')}\n`);
    const spawnOptions: SpawnOptions = {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
    };
    this.child = spawn(options.command, options.args, spawnOptions);
    const onData = (chunk: Buffer) => {
      try {
        writeSync(this.logFd, chunk);
      } catch {
        // The log is best effort; the process matters more than its log.
      }
      const text = chunk.toString();
      this.tail = (this.tail + text).slice(-8_000);
      if (this.lineListeners.size > 0) {
        const lines = (this.partial + text).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) for (const listener of this.lineListeners) listener(line);
      }
    };
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.tail += `\n${String(error)}`;
      });
      this.child.once('close', (code, signal) => {
        process.removeListener('exit', this.killOnExit);
        try {
          closeSync(this.logFd);
        } catch {
          // already closed
        }
        resolve({ code, signal });
      });
    });
    this.killOnExit = () => {
      if (this.running) this.child.kill('SIGKILL');
    };
    process.once('exit', this.killOnExit);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last few KB of output, for error messages. */
  output(): string {
    return this.tail;
  }

  /** Resolves when a line of output matches; rejects if the process exits first or on timeout. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`${this.name} did not print ${pattern} within ${timeoutMs / 1000}s:\n${this.output()}`)), timeoutMs);
      const listener = (line: string) => {
        if (pattern.test(line)) finish(undefined, line);
      };
      const finish = (error?: Error, line?: string) => {
        clearTimeout(timer);
        this.lineListeners.delete(listener);
        if (error) reject(error);
        else resolve(line!);
      };
      this.lineListeners.add(listener);
      if (pattern.test(this.tail)) finish(undefined, this.tail);
      void this.exited.then(({ code, signal }) => finish(new Error(`${this.name} exited (${signal ?? code}) before it was ready:\n${this.output()}`)));
    });
  }

  /** SIGKILL: no shutdown at all, as a crash or an OOM kill would do. */
  async kill(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Sends `signal`, waits up to `graceMs`, then SIGKILLs. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<void> {
    if (!this.running) {
      await this.exited;
      return;
    }
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
