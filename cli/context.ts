/**
 * What every command shares within one run of the CLI: where output goes (JSON for scripts,
 * text for people), the colours, and a TurnpikeClient connected on first use.
 */
import { TurnpikeClient } from '../client/turnpike-client.js';
import { connectionOptionsFromEnvironment } from '../worker/environment.js';
import { colorsFor, type Colors } from './format.js';

/** A stream the CLI writes to: `process.stdout`, or a capture in tests. Bytes only from `content get`. */
export interface OutputStream {
  write(chunk: string | Uint8Array): unknown;
  isTTY?: boolean;
}

/** Where one run of the CLI reads and writes. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  /**
   * Used as-is instead of connecting from the environment (tests, embedding); the CLI does not
   * close it, and `--task-queue` does not apply to it.
   */
  client?: TurnpikeClient;
}

/** Options of the program that every command accepts. */
export interface GlobalOptions {
  json?: boolean;
  taskQueue?: string;
}

/** One run's shared state; `runCli` makes one per call, so runs never share a connection or options. */
export class CliContext {
  /** For stdout: plain unless stdout is a terminal and NO_COLOR is unset. */
  readonly colors: Colors;
  /** For stderr, decided the same way for stderr. */
  readonly errorColors: Colors;
  /** The running command's options with the program's; set before its action runs. */
  options: GlobalOptions = {};
  private connecting?: Promise<TurnpikeClient>;

  constructor(private readonly io: CliIo) {
    this.colors = colorsFor(io.stdout, process.env);
    this.errorColors = colorsFor(io.stderr, process.env);
  }

  get json(): boolean {
    return Boolean(this.options.json);
  }

  /** The client: the injected one, or one connection from the environment for the whole run. */
  client(): Promise<TurnpikeClient> {
    if (this.io.client) return Promise.resolve(this.io.client);
    this.connecting ??= TurnpikeClient.connect({ taskQueue: this.options.taskQueue }).catch((error: unknown) => {
      // The SDK's message ("Failed to connect before the deadline") does not say where it tried.
      const { connectionOptions } = connectionOptionsFromEnvironment();
      throw new Error(`cannot connect to Temporal at ${connectionOptions.address} (TEMPORAL_ADDRESS)`, { cause: error });
    });
    return this.connecting;
  }

  /** Closes the connection this run opened, if any. */
  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    await connecting?.then((client) => client.close(), () => undefined);
  }

  /** A command's answer: `value` as JSON with `--json`, else `text()` for people. */
  print(value: unknown, text: () => string): void {
    this.io.stdout.write(`${this.json ? JSON.stringify(value, null, 2) : text()}\n`);
  }

  /**
   * One event of a stream (`watch`): with `--json` one line of JSON per event (NDJSON), so a
   * script can act on each as it comes.
   */
  event(value: Record<string, unknown>, text: () => string): void {
    this.endText();
    this.io.stdout.write(`${this.json ? JSON.stringify(value) : text()}\n`);
  }

  /** True while streamed text is being written on a line that has not ended yet. */
  private textOpen = false;

  /**
   * Streamed text as it arrives (`watch`): for people, written as is on one open line that
   * the next event or `endText` ends; with `--json`, one `{"type":"text", ...}` line per piece.
   */
  text(value: Record<string, unknown> & { text: string }, prefix: () => string): void {
    if (this.json) {
      this.io.stdout.write(`${JSON.stringify({ type: 'text', ...value })}\n`);
      return;
    }
    if (!this.textOpen) this.io.stdout.write(prefix());
    this.textOpen = true;
    this.io.stdout.write(value.text);
  }

  /** Ends the line of streamed text, if one is open. */
  endText(): void {
    if (!this.textOpen) return;
    this.textOpen = false;
    this.io.stdout.write('\n');
  }

  /** Bytes as they are, on stdout (`content get`). */
  bytes(data: Uint8Array): void {
    this.io.stdout.write(data);
  }

  /** A line for people on stderr, beside the answer on stdout (`content sweep --verbose`). */
  note(line: string): void {
    this.io.stderr.write(`${this.errorColors.dim(line)}\n`);
  }

  /** One JSON object on one line, with or without `--json`: for exports (`decisions --jsonl`). */
  jsonLine(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /**
   * A failure, on stderr: `turnpike: rejected (UnknownApprovalId): ...` in red, or with `--json`
   * `{"error": {...}}` so a script can read the type as well as the exit code.
   */
  error(failure: { exitCode: number; kind: string; message: string; type?: string }): void {
    const { kind, type, message } = failure;
    this.io.stderr.write(
      this.json
        ? `${JSON.stringify({ error: failure })}\n`
        : `${this.errorColors.red(`turnpike: ${kind}${type ? ` (${type})` : ''}: ${message}`)}\n`,
    );
  }
}
