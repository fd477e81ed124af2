/**
 * The turnpike CLI run in-process through `runCli` on a test's `TurnpikeClient`, its output
 * captured: for the CLI's tests on the real dev server.
 */
import { expect } from 'vitest';
import { runCli } from '../../cli/main.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI on the client `client()` gives at the time of each call (a test file's, made in its beforeAll). */
export function cliRunner(client: () => TurnpikeClient) {
  /**
   * Starts the CLI on `argv`, its stdout a terminal when `tty` is set; `output()` shows what it has
   * printed so far, `done` resolves when it exits.
   */
  function launch(argv: string[], tty = false): { output: () => CliRun; done: Promise<CliRun> } {
    const run: CliRun = { code: -1, stdout: '', stderr: '' };
    const done = runCli(argv, {
      client: client(),
      stdout: { write: (chunk: string) => (run.stdout += chunk), isTTY: tty },
      stderr: { write: (chunk: string) => (run.stderr += chunk) },
    }).then((code) => ({ ...run, code }));
    return { output: () => run, done };
  }

  async function cli(...argv: string[]): Promise<CliRun> {
    return launch(argv).done;
  }

  /** Runs a command with `--json`, expects success, and parses its stdout. */
  async function cliJson<T>(...argv: string[]): Promise<T> {
    const run = await cli(...argv, '--json');
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as T;
  }

  return { launch, cli, cliJson };
}
