/**
 * A Python virtual environment for a tool the tests need (the S3 server, the A2A Python client),
 * made from a requirements file whose every package is pinned, dependencies included, and
 * installed with `pip install --no-deps --only-binary=:all:`: exactly that list, from wheels,
 * nothing built. It is cached under ~/.cache/turnpike/<name>/, in a folder named after the
 * requirements file and the Python that runs it, so changing a line installs afresh and a cached
 * one needs no network at all.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findOnPath, isExecutable, turnpikeCacheRoot } from './go-install.js';

/** Some of the pinned wheels (e.g. Flask 3.1) require it. */
const MINIMUM_PYTHON: [number, number] = [3, 11];

/** A clear, user-facing failure: printed as one message, never as a stack trace. */
export class PythonEnvironmentError extends Error {
  override name = 'PythonEnvironmentError';
}

export interface PythonEnvironment {
  /** The cache folder's name, and what the messages call it: `s3-server`. */
  name: string;
  /** What it is for, in messages: "the S3 test server (moto)". */
  what: string;
  /** The pinned requirements file. */
  requirements: string;
  /** Modules imported once installed, to check the environment works. */
  imports: string[];
}

interface Run {
  code: number;
  output: string;
}

/** Runs a command to its end (or `limitMs`), with its output kept for error messages. */
function run(command: string, args: string[], limitMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' } });
    let output = '';
    const limit = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => (output += String(error)));
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code: code ?? -1, output });
    });
  });
}

const tail = (output: string, lines = 15) => output.trim().split('\n').slice(-lines).join('\n  ');

/** `PYTHON`, else `python3` on PATH, with its version; throws when it is missing or too old. */
async function findPython(what: string): Promise<{ python: string; version: string }> {
  const python = process.env.PYTHON ?? findOnPath('python3');
  const wanted = MINIMUM_PYTHON.join('.');
  if (!python || !isExecutable(python)) {
    throw new PythonEnvironmentError(
      `${what} needs Python ${wanted} or newer (with its venv module) and found none${process.env.PYTHON ? ` (PYTHON=${process.env.PYTHON} is not an executable)` : ''}: install python3 and python3-venv, or set PYTHON=/path/to/python3.`,
    );
  }
  const probe = await run(python, ['-c', 'import sys, venv; print("%d.%d.%d" % sys.version_info[:3])'], 60_000);
  const version = probe.output.trim().split('\n').at(-1) ?? '';
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (probe.code !== 0 || major < MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor < MINIMUM_PYTHON[1])) {
    throw new PythonEnvironmentError(
      `${what} needs Python ${wanted} or newer with its venv module; ${python} ${probe.code === 0 ? `is ${version}` : `failed:\n  ${tail(probe.output)}`}. Install python3 and python3-venv, or set PYTHON=/path/to/python3.`,
    );
  }
  return { python, version };
}

/**
 * The cached environment's Python, installed on first use (from PyPI; under a minute).
 * @throws PythonEnvironmentError saying what to install.
 */
export async function ensurePythonEnvironment(environment: PythonEnvironment, log: (line: string) => void = (line) => console.error(line)): Promise<string> {
  const { name, what, requirements, imports } = environment;
  const { python, version } = await findPython(what);
  const hash = createHash('sha256').update(readFileSync(requirements)).update(`\0${python}\0${version}`).digest('hex').slice(0, 16);
  const target = path.join(turnpikeCacheRoot(), name, hash);
  const targetPython = path.join(target, 'bin', 'python');
  // Written last: a folder without it is an interrupted install, never used.
  const marker = path.join(target, 'installed');
  if (existsSync(marker) && isExecutable(targetPython)) return targetPython;

  // Installed beside its final name and renamed: an interrupted install never leaves a broken one.
  const staging = `${target}.partial-${process.pid}`;
  const stagingPython = path.join(staging, 'bin', 'python');
  mkdirSync(path.dirname(target), { recursive: true });
  // A folder without the marker was never finished (or was tampered with): install afresh.
  if (existsSync(target) && !existsSync(marker)) rmSync(target, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
  try {
    const started = Date.now();
    log(`turnpike: installing ${what} (from PyPI; first run only)...`);
    const venv = await run(python, ['-m', 'venv', staging], 5 * 60_000);
    if (venv.code !== 0) throw new PythonEnvironmentError(`turnpike could not make a Python virtual environment with ${python} ${version} (install python3-venv):\n  ${tail(venv.output)}`);
    const install = await run(stagingPython, ['-m', 'pip', 'install', '--no-deps', '--only-binary=:all:', '--quiet', '-r', requirements], 20 * 60_000);
    if (install.code !== 0) {
      throw new PythonEnvironmentError(`turnpike could not install the packages of ${what} (${requirements}) from PyPI with ${python} ${version}:\n  ${tail(install.output)}`);
    }
    const check = await run(stagingPython, ['-c', `import ${imports.join(', ')}`], 5 * 60_000);
    if (check.code !== 0) throw new PythonEnvironmentError(`turnpike installed the packages of ${what} but cannot import them:\n  ${tail(check.output)}`);
    writeFileSync(path.join(staging, 'installed'), `${new Date().toISOString()}\n`);
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process installed the same environment meanwhile: use that one.
      if (!existsSync(marker)) throw error;
    }
    log(`turnpike: installed ${what} in ${Math.round((Date.now() - started) / 1000)}s -> ${target}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return targetPython;
}
