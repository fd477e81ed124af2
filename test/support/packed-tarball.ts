/**
 * One `npm pack` of the repository per test run, shared by every test file that installs the
 * package into a fresh app. Packing runs `prepack`, which rebuilds dist/: two files packing at
 * once would build over each other, and each pack costs a build. The first file to ask packs
 * (under a lock: an atomic mkdir) into the run's own directory, which the global setup removes at
 * the end; the others wait for its answer.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface PackedTurnpike {
  /** The tarball's full path. */
  tarball: string;
  /** The paths the tarball holds. */
  files: string[];
}

/** The run's tarball of turnpike: packed by the first caller, waited for by the rest. */
export async function packedTurnpike(env: NodeJS.ProcessEnv = process.env, waitMs = 600_000): Promise<PackedTurnpike> {
  const directory = path.join(path.dirname(inject('workflowBundlePath')), 'packed');
  const answer = path.join(directory, 'packed.json');
  const failure = path.join(directory, 'failed.txt');
  try {
    mkdirSync(directory);
  } catch {
    return waitForPack(answer, failure, waitMs);
  }
  try {
    // prepack builds dist/ with tsc first, exactly as a publish would.
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', directory], { cwd: REPO, env, maxBuffer: 64 * 1024 * 1024, timeout: waitMs });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const result: PackedTurnpike = { tarball: path.join(directory, packed.filename), files: packed.files.map((file) => file.path) };
    writeFileSync(answer, JSON.stringify(result));
    return result;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    const text = `npm pack failed:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${failed.message}`;
    writeFileSync(failure, text);
    throw new Error(text);
  }
}

async function waitForPack(answer: string, failure: string, waitMs: number): Promise<PackedTurnpike> {
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    if (existsSync(answer)) return JSON.parse(readFileSync(answer, 'utf8')) as PackedTurnpike;
    if (existsSync(failure)) throw new Error(readFileSync(failure, 'utf8'));
    await sleep(500);
  }
  throw new Error(`no tarball of turnpike after ${waitMs} ms: another test file's npm pack is still running or died`);
}
