/**
 * Whether one MCP server answers, as this worker last found it. Every listing of the server's
 * tools reports here. A server that failed is down: turns offered all tools leave it out at once
 * instead of waiting for it, and it is tried again in the background, after 1 s, then twice as
 * long each time up to a minute (its `reconnect` option), until it answers and is up again.
 * Each change is logged, counted in the `turnpike_mcp_server_up` gauge (1 up, 0 down), and
 * shown by `TurnpikePlugin.mcpServers()` (the worker's `GET /mcp-servers`).
 */
import type { MetricMeter } from '@temporalio/common';
import type { McpServerTimings } from './mcp-servers.js';

/** What a worker knows of one of its MCP servers. */
export interface McpServerStatus {
  server: string;
  /** `unknown` until the first listing; `up` after one succeeded; `down` after one failed. */
  state: 'unknown' | 'up' | 'down';
  /** See `McpServerConfig.required`. */
  required: boolean;
  /** When the state last changed (ISO 8601); absent while unknown. */
  since?: string;
  /** Tools the server offers this worker's turns, as last listed; absent until one listing succeeded. */
  tools?: number;
  /** While down: why, and how many listings failed in a row. */
  error?: string;
  failures?: number;
  /** While down: when the background retry lists it next (ISO 8601). */
  nextAttemptAt?: string;
}

/** Where the changes go: the worker's logger and metric meter (`Runtime.instance()`), when given. */
export interface McpHealthTelemetry {
  logger?: { info(message: string, meta?: Record<string, unknown>): void; warn(message: string, meta?: Record<string, unknown>): void };
  meter?: MetricMeter;
}

export class McpServerHealth {
  private state: McpServerStatus['state'] = 'unknown';
  private since?: Date;
  private tools?: number;
  private error?: string;
  private failures = 0;
  private retry?: { timer: ReturnType<typeof setTimeout>; at: Date };
  private closed = false;
  private readonly gauge?: ReturnType<MetricMeter['createGauge']>;

  constructor(
    readonly server: string,
    readonly required: boolean,
    private readonly timings: McpServerTimings,
    /** Lists the server's tools (through its pool), reporting back here. */
    private readonly relist: () => Promise<unknown>,
    private readonly telemetry: McpHealthTelemetry = {},
  ) {
    this.gauge = telemetry.meter?.createGauge('turnpike_mcp_server_up', 'int', 'servers', 'MCP servers this worker can list: 1 up, 0 down, by server');
  }

  get down(): boolean {
    return this.state === 'down';
  }

  /** While down: since when (epoch ms), as this worker found it. */
  get downSince(): number | undefined {
    return this.state === 'down' ? this.since?.getTime() : undefined;
  }

  /** Why the server is left out of a turn, for the turn's state and stream. */
  get reason(): string {
    return `unavailable since ${this.since?.toISOString()} (${this.failures} failed listing${this.failures === 1 ? '' : 's'}): ${this.error}`;
  }

  listed(tools: number): void {
    this.tools = tools;
    if (this.state !== 'up') {
      if (this.state === 'down') this.telemetry.logger?.info(`MCP server "${this.server}" answers again`, { server: this.server, failures: this.failures, tools });
      this.change('up');
    }
    this.failures = 0;
    this.error = undefined;
    this.cancelRetry();
  }

  failed(error: string): void {
    this.failures++;
    this.error = error;
    if (this.state !== 'down') this.change('down');
    const delay = Math.min(this.timings.reconnect.initialIntervalMs * 2 ** (this.failures - 1), this.timings.reconnect.maximumIntervalMs);
    this.telemetry.logger?.warn(`MCP server "${this.server}" could not list its tools: ${error}; trying again in ${delay} ms`, {
      server: this.server,
      failures: this.failures,
      required: this.required,
    });
    this.scheduleRetry(delay);
  }

  status(): McpServerStatus {
    return {
      server: this.server,
      state: this.state,
      required: this.required,
      ...(this.since ? { since: this.since.toISOString() } : {}),
      ...(this.tools !== undefined ? { tools: this.tools } : {}),
      ...(this.state === 'down' ? { error: this.error, failures: this.failures } : {}),
      ...(this.retry ? { nextAttemptAt: this.retry.at.toISOString() } : {}),
    };
  }

  /** Stops the background retries (the worker is shutting down). */
  close(): void {
    this.closed = true;
    this.cancelRetry();
  }

  private change(state: 'up' | 'down'): void {
    this.state = state;
    this.since = new Date();
    this.gauge?.set(state === 'up' ? 1 : 0, { server: this.server });
  }

  private scheduleRetry(delay: number): void {
    this.cancelRetry();
    if (this.closed) return;
    // The listing reports its own outcome (listed or failed, which schedules the next try).
    const timer = setTimeout(() => {
      this.retry = undefined;
      void this.relist().catch(() => undefined);
    }, delay);
    // A server being retried must not keep the worker's process alive.
    timer.unref?.();
    this.retry = { timer, at: new Date(Date.now() + delay) };
  }

  private cancelRetry(): void {
    if (this.retry) clearTimeout(this.retry.timer);
    this.retry = undefined;
  }
}
