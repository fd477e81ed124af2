/**
 * Starting the dev server on a busy machine: a port taken between the moment it was picked and
 * the moment the server binds it makes the server exit, and the start tries again with fresh ports.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { connectTemporal } from '../../connection/temporal-connection.js';
import { freePort, startDevServer } from '../../scripts/dev-server.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../../workflows/context/search-attributes.js';
import { ensureTemporalCli } from '../../scripts/temporal-cli.js';

describe('starting the dev server', () => {
  it('starts again when a port it binds is taken, and says so; gives up after 3 starts with the reason', async () => {
    const port = await freePort();
    // The readiness check connects to whatever listens there: the holder drops those connections.
    const holder = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const log: string[] = [];
    try {
      // The port is held for good, so every start fails the same way: the retries are what is seen.
      await expect(startDevServer({ port, log: (line) => log.push(line) })).rejects.toThrow(/address already in use/);
    } finally {
      holder.close();
    }
    expect(log.filter((line) => /starting again \(\d\/3\)/.test(line))).toHaveLength(2);

    // Freed, the same port serves.
    const server = await startDevServer({ port });
    try {
      expect(server.address).toBe(`127.0.0.1:${port}`);
    } finally {
      await server.stop();
    }
  });
});

describe('a server that loses one of its own ports', () => {
  it('is started again though the bind failure is followed by a stack trace longer than the output kept', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'turnpike-dev-server-'));
    const real = await ensureTemporalCli();
    const starts = path.join(directory, 'starts');
    // As the server does when a service's gRPC port is taken: the bind failure is logged, then
    // a nil listener panics with some 30 KB of stack. Only the first start fails.
    const cli = path.join(directory, 'temporal');
    writeFileSync(
      cli,
      [
        '#!/bin/sh',
        `echo start >> '${starts}'`,
        `if [ "$(wc -l < '${starts}')" -eq 1 ]; then`,
        `  echo 'Failed to start gRPC listener: listen tcp 127.0.0.1:7235: bind: address already in use' >&2`,
        `  echo 'panic: runtime error: invalid memory address or nil pointer dereference' >&2`,
        `  i=0; while [ $i -lt 400 ]; do echo "go.uber.org/dig.paramList.BuildList(...) frame $i of a long stack trace" >&2; i=$((i+1)); done`,
        '  exit 2',
        'fi',
        `exec '${real}' "$@"`,
      ].join('\n'),
    );
    chmodSync(cli, 0o755);
    const previous = process.env.TEMPORAL_CLI;
    process.env.TEMPORAL_CLI = cli;
    const log: string[] = [];
    try {
      const server = await startDevServer({ log: (line) => log.push(line) });
      await server.stop();
    } finally {
      if (previous === undefined) delete process.env.TEMPORAL_CLI;
      else process.env.TEMPORAL_CLI = previous;
      rmSync(directory, { recursive: true, force: true });
    }
    expect(log.filter((line) => /starting again \(2\/3\)/.test(line))).toHaveLength(1);
  });
});

describe('a database kept from an earlier start', () => {
  it('gets the search attributes turnpike added since (start-dev registers them only in a new database)', { timeout: 120_000 }, async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'turnpike-dev-server-'));
    const dbFile = path.join(directory, 'temporal.sqlite');
    try {
      // An earlier version's database: one turnpike attribute only.
      const earlier = await freePort();
      const cli = await ensureTemporalCli();
      const child = spawn(cli, ['server', 'start-dev', '--headless', '--port', String(earlier), '--ui-port', '0', '--http-port', '0', '--metrics-port', '0', '--db-filename', dbFile, '--search-attribute', 'AgentTurnStatus=Keyword'], { stdio: 'ignore' });
      try {
        for (let attempt = 0; ; attempt++) {
          const listed = await connectTemporal({ address: `127.0.0.1:${earlier}`, connectTimeout: 1_000 })
            .then(async (connection) => {
              try {
                return (await connection.operatorService.listSearchAttributes({ namespace: 'default' })).customAttributes ?? {};
              } finally {
                await connection.close();
              }
            })
            .catch(() => undefined);
          if (listed && 'AgentTurnStatus' in listed) {
            expect(Object.keys(listed)).not.toContain('TurnpikeApprovers');
            break;
          }
          if (attempt > 300) throw new Error('the earlier server never started');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      } finally {
        child.kill('SIGINT');
        await new Promise((resolve) => child.once('exit', resolve));
      }

      const server = await startDevServer({ dbFile });
      try {
        const connection = await connectTemporal({ address: server.address });
        try {
          const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
          expect(Object.keys(customAttributes ?? {}).sort()).toEqual(expect.arrayContaining(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort()));
        } finally {
          await connection.close();
        }
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
