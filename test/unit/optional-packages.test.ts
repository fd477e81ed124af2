/**
 * The optional peer dependencies: what package.json declares, and the failure a feature reports
 * when its package is not installed (a module in a folder where Node finds none of them).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { importOptional, MISSING_PACKAGE, OPTIONAL_PEERS } from '../../peers/optional-packages.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPTIONAL_PACKAGES_MODULE = new URL('../../peers/optional-packages.ts', import.meta.url).href;

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

describe('optional peer dependencies', () => {
  it('are the ones package.json declares optional, with the same ranges, tested at the low end of each', () => {
    const optional = Object.keys(manifest.peerDependenciesMeta).filter((name) => manifest.peerDependenciesMeta[name].optional);
    expect(optional.sort()).toEqual(Object.keys(OPTIONAL_PEERS).sort());
    for (const [name, range] of Object.entries(OPTIONAL_PEERS)) {
      expect(manifest.peerDependencies[name]).toBe(range);
      expect(manifest.dependencies[name]).toBeUndefined();
      // The repository's own tests run the version the range starts at.
      expect(`^${manifest.devDependencies[name]}`).toBe(range);
    }
  });

  const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-optional-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  /**
   * What `importOptional(feature, packages, () => import(<a module importing specifier>))` throws,
   * in a fresh Node process (vitest resolves imports its own way): the module is in a folder with
   * no node_modules, so Node cannot find the package.
   */
  function failureOf(feature: string, packages: string[], specifier: string) {
    const file = path.join(directory, `${specifier.replace(/\W/g, '_')}.mjs`);
    writeFileSync(file, `import ${JSON.stringify(specifier)};\nexport const loaded = true;\n`);
    const program = `
      const { importOptional } = await import(${JSON.stringify(OPTIONAL_PACKAGES_MODULE)});
      const { ApplicationFailure } = await import('@temporalio/common');
      const error = await importOptional(${JSON.stringify(feature)}, ${JSON.stringify(packages)}, () => import(${JSON.stringify(pathToFileURL(file).href)})).then(() => undefined, (error) => error);
      console.log(JSON.stringify(error && { applicationFailure: error instanceof ApplicationFailure, type: error.type, nonRetryable: error.nonRetryable, message: error.message, code: error.code, causeCode: error.cause?.code }));
    `;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: ROOT, encoding: 'utf8' });
    return JSON.parse(output.trim().split('\n').at(-1)!);
  }

  it('name the missing package and the command that installs it, as a non-retryable failure', () => {
    expect(failureOf('The model provider "anthropic"', ['@anthropic-ai/sdk'], '@anthropic-ai/sdk')).toEqual({
      applicationFailure: true,
      type: MISSING_PACKAGE,
      nonRetryable: true,
      message: 'The model provider "anthropic" needs @anthropic-ai/sdk, which is not installed: npm install @anthropic-ai/sdk@^1.12.0',
      causeCode: 'ERR_MODULE_NOT_FOUND',
    });
    // A subpath import of a missing package (the MCP SDK is imported that way).
    expect(failureOf('A worker with mcpServers', ['@modelcontextprotocol/sdk'], '@modelcontextprotocol/sdk/client/index.js')).toMatchObject({
      applicationFailure: true,
      message: 'A worker with mcpServers needs @modelcontextprotocol/sdk, which is not installed: npm install @modelcontextprotocol/sdk@^1.32.2',
    });
  });

  it('name the one of several that is missing, and install them all', () => {
    expect(failureOf('turnpike codec-server', ['fastify', 'jose'], 'jose')).toMatchObject({
      applicationFailure: true,
      message: 'turnpike codec-server needs jose, which is not installed: npm install fastify@^5.12.8 jose@^6.2.17',
    });
  });

  it('pass other errors through, a missing package they do not name included', async () => {
    expect(failureOf('x', ['openai'], 'left-pad-that-is-not-installed')).toMatchObject({ applicationFailure: false, code: 'ERR_MODULE_NOT_FOUND' });
    const broken = new Error('boom');
    await expect(importOptional('x', ['openai'], () => Promise.reject(broken))).rejects.toBe(broken);
    await expect(importOptional('x', ['openai'], async () => ({ ok: 1 }))).resolves.toEqual({ ok: 1 });
  });
});
