import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TemporalCliUnavailableError, ensureTemporalCli } from '../../scripts/temporal-cli.js';

const saved = { ...process.env };
let directory: string;

beforeEach(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'turnpike-cli-'));
  // Nothing to find: no TEMPORAL_CLI, no temporal or go on PATH, an empty cache.
  delete process.env.TEMPORAL_CLI;
  delete process.env.GO;
  process.env.PATH = path.join(directory, 'empty-bin');
  process.env.TURNPIKE_CACHE_DIR = path.join(directory, 'cache');
});
afterEach(() => {
  process.env = { ...saved };
});

describe('finding or building the Temporal CLI', () => {
  it('says what to install when there is no Go toolchain', async () => {
    const attempt = ensureTemporalCli({ log: () => {}, goCandidates: [] });
    await expect(attempt).rejects.toBeInstanceOf(TemporalCliUnavailableError);
    await expect(attempt).rejects.toThrow(/install Go 1\.23 or newer .*\n.*TEMPORAL_CLI=/s);
  });

  it('reports a failed build with the tail of its output, and caches nothing', async () => {
    const fakeGo = path.join(directory, 'go');
    writeFileSync(fakeGo, '#!/bin/sh\necho "go: github.com/temporalio/cli@v1.5.1: connection refused" >&2\nexit 1\n');
    chmodSync(fakeGo, 0o755);
    process.env.GO = fakeGo;
    const attempt = ensureTemporalCli({ log: () => {} });
    await expect(attempt).rejects.toThrow(/could not build the Temporal CLI v1\.5\.1 with .*: go: github.com\/temporalio\/cli@v1\.5\.1: connection refused\n/);
    // The next run tries again rather than finding a half-built binary.
    process.env.GO = path.join(directory, 'missing-go');
    await expect(ensureTemporalCli({ log: () => {}, goCandidates: [] })).rejects.toThrow(/GO=.*missing-go is not an executable file/);
  });

  it('uses TEMPORAL_CLI when set, and refuses one that is not executable', async () => {
    const cli = path.join(directory, 'temporal');
    writeFileSync(cli, '#!/bin/sh\necho temporal version test\n');
    chmodSync(cli, 0o755);
    process.env.TEMPORAL_CLI = cli;
    await expect(ensureTemporalCli()).resolves.toBe(cli);
    process.env.TEMPORAL_CLI = path.join(directory, 'nope');
    await expect(ensureTemporalCli()).rejects.toThrow(/is not an executable file/);
  });

  it('prints one clear message and exits 1 from the command line, without a stack trace', async () => {
    const script = path.resolve('scripts/temporal-cli.ts');
    const tsx = path.resolve('node_modules/.bin/tsx');
    const failure = await promisify(execFile)(process.execPath, [tsx, script], { env: { ...process.env, GO: path.join(directory, 'missing-go') } }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/needs the Temporal CLI and could not find one \(GO=.*missing-go is not an executable file\)/);
    expect(failure?.stderr).not.toMatch(/\n\s+at /);
  });
});
