/**
 * The connections of one worker to one MCP server. Each call holds a connection to itself for
 * as long as it runs, so a question the server asks on it (`elicitation/create`, which names no
 * request) is the question of that call. Sequential calls reuse the same connection (a stdio
 * server stays one child process); calls that overlap open more, up to `maxConnections`, after
 * which a call waits for one to come free. Extra connections idle for a while are closed; the
 * last one is kept. The server's tool list is cached here, for all of them, until any of them
 * hears `notifications/tools/list_changed`, or none is left open to hear it.
 */
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationHandler, McpConnectionEvents, McpTool } from './mcp-connection.js';

/** The part of a connection the pool uses (a real `McpConnection`, or a stand-in in unit tests). */
export interface PooledConnection {
  readonly usable: boolean;
  asker?: ElicitationHandler;
  listTools(): Promise<McpTool[]>;
  callTool(name: string, args: Record<string, unknown>, meta: Record<string, unknown>, options: RequestOptions): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface McpPoolLimits {
  /** Connections open at once at most; a call beyond waits for one. */
  maxConnections: number;
  /** An idle connection beyond the first is closed after this long unused. */
  idleTimeoutMs: number;
}

/** Defaults: enough for the parallel tool calls of a few turns, without a process per call. */
export const DEFAULT_MCP_POOL_LIMITS: McpPoolLimits = { maxConnections: 8, idleTimeoutMs: 60_000 };

/** How a call ended, for whether its connection may serve another. */
export type CallEnd = 'reusable' | 'retire';

export class McpConnectionPool<C extends PooledConnection = PooledConnection> {
  private readonly all = new Set<C>();
  /** Idle connections, the most recently used last (taken first: it is the warmest). */
  private readonly idle: C[] = [];
  private readonly idleTimers = new Map<C, ReturnType<typeof setTimeout>>();
  private readonly waiting: Array<{ take: (connection: C) => void; fail: (error: unknown) => void }> = [];
  /** Connections being closed, which `close()` waits for too (a stdio server is stopped by then). */
  private readonly closing = new Set<Promise<void>>();
  private tools?: Promise<McpTool[]>;
  /** Bumped by every list change, so a listing that was in flight when one arrived is not cached. */
  private generation = 0;
  private closed = false;

  constructor(
    readonly server: string,
    /** Makes a connection (which connects on first use) that reports to these events. */
    private readonly open: (events: McpConnectionEvents) => C,
    private readonly limits: McpPoolLimits = DEFAULT_MCP_POOL_LIMITS,
  ) {}

  /** Connections open now (idle or held), for tests and metrics. */
  get size(): number {
    return this.all.size;
  }

  private newConnection(): C {
    const connection = this.open({
      listChanged: () => this.forgetTools(),
      closed: () => this.drop(connection),
    });
    this.all.add(connection);
    return connection;
  }

  /** A connection for one caller alone: an idle one, a new one, or the next to come free. */
  private async acquire(signal?: AbortSignal): Promise<C> {
    if (this.closed) throw new Error(`MCP server "${this.server}": the worker is shutting down`);
    signal?.throwIfAborted();
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      clearTimeout(this.idleTimers.get(connection));
      this.idleTimers.delete(connection);
      if (connection.usable) return connection;
    }
    if (this.all.size < this.limits.maxConnections) return this.newConnection();
    return new Promise<C>((resolve, reject) => {
      const waiter = {
        take: (connection: C) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(connection);
        },
        fail: (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /**
   * Gives a connection back. A retired one (its call was cancelled or timed out, so the server
   * may still be working on it and could ask a question nobody holds the connection for) is
   * closed; its place goes to a waiting call.
   */
  private release(connection: C, end: CallEnd): void {
    if (end === 'retire' || !connection.usable || this.closed) {
      this.remove(connection);
      this.closeConnection(connection);
      return;
    }
    const waiter = this.waiting.shift();
    if (waiter) return waiter.take(connection);
    this.idle.push(connection);
    if (this.all.size > 1) {
      const timer = setTimeout(() => this.closeIdle(connection), this.limits.idleTimeoutMs);
      // An idle connection must not keep the worker's process alive.
      timer.unref?.();
      this.idleTimers.set(connection, timer);
    }
  }

  private closeIdle(connection: C): void {
    this.idleTimers.delete(connection);
    const at = this.idle.indexOf(connection);
    // Keep one: the next call should not pay for a new process or session.
    if (at < 0 || this.all.size <= 1) return;
    this.idle.splice(at, 1);
    this.remove(connection);
    this.closeConnection(connection);
  }

  private closeConnection(connection: C): void {
    const closed = connection.close().catch(() => undefined);
    this.closing.add(closed);
    void closed.then(() => this.closing.delete(closed));
  }

  /** A connection ended by itself (the child exited, the session ended). */
  private drop(connection: C): void {
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    clearTimeout(this.idleTimers.get(connection));
    this.idleTimers.delete(connection);
    this.remove(connection);
  }

  private remove(connection: C): void {
    if (!this.all.delete(connection)) return;
    // With no connection open, nobody would hear of a list change: the next listing asks again.
    if (this.all.size === 0) this.forgetTools();
    this.serveWaiter();
  }

  /** A place came free: the first waiting call gets a new connection. */
  private serveWaiter(): void {
    if (this.closed || this.all.size >= this.limits.maxConnections) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter.take(this.newConnection());
  }

  /** Runs `use` with a connection held for it alone; `end` says whether the connection may serve again. */
  async with<T>(use: (connection: C) => Promise<T>, end: (outcome: { ok: true; value: T } | { ok: false; error: unknown }) => CallEnd, signal?: AbortSignal): Promise<T> {
    const connection = await this.acquire(signal);
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await use(connection) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    this.release(connection, end(outcome));
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  private forgetTools(): void {
    this.generation++;
    this.tools = undefined;
  }

  /** The server's tools, from the cache when no list change has been announced since. */
  listTools(): Promise<McpTool[]> {
    if (!this.tools) {
      const generation = this.generation;
      const listing = this.with(
        (connection) => connection.listTools(),
        ({ ok }) => (ok ? 'reusable' : 'retire'),
      );
      this.tools = listing;
      listing.then(
        () => {
          if (this.generation !== generation && this.tools === listing) this.tools = undefined;
        },
        () => {
          if (this.tools === listing) this.tools = undefined;
        },
      );
    }
    return this.tools;
  }

  /** Closes every connection; calls waiting for one fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.fail(new Error(`MCP server "${this.server}": the worker is shutting down`));
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    const connections = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all([...connections.map((connection) => connection.close()), ...this.closing]);
  }
}
