/**
 * The heavy SDKs a worker may never need are loaded on first use, not when `turnpike/worker` is
 * imported or a `TurnpikePlugin` is built: openai and @anthropic-ai/sdk (~22 MB of RSS together)
 * and @modelcontextprotocol/sdk with its Ajv (~28 MB). They are optional peer dependencies, so an
 * application may not have them at all. Checked in a fresh Node process, since this test process
 * has loaded them all already.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HEAVY = ['/node_modules/openai/', '/node_modules/@anthropic-ai/sdk/', '/node_modules/@modelcontextprotocol/sdk/', '/node_modules/@slack/web-api/'];

/** The heavy packages loaded in a fresh process after `script` ran, as the part of HEAVY each matched. */
function heavyLoadedAfter(script: string): string[] {
  const program = `
    const { createRequire, register } = await import('node:module');
    const { MessageChannel } = await import('node:worker_threads');
    const resolved = [];
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (url) => resolved.push(url));
    port1.unref();
    register('./test/support/loaded-urls-hooks.mjs', { parentURL: ${JSON.stringify(new URL('../..', import.meta.url).href)}, data: { port: port2 }, transferList: [port2] });
    ${script}
    await new Promise((resolve) => setTimeout(resolve, 100));
    const loaded = [...resolved, ...Object.keys(createRequire(import.meta.url).cache)];
    console.log(JSON.stringify(${JSON.stringify(HEAVY)}.filter((part) => loaded.some((file) => file.includes(part)))));
  `;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(output.trim().split('\n').at(-1)!) as string[];
}

describe('SDKs loaded on first use', () => {
  it('importing turnpike/worker and building the plugin, MCP servers and Slack declared, loads none of them', () => {
    const loaded = heavyLoadedAfter(`
      const { TurnpikePlugin } = await import('./worker/index.ts');
      new TurnpikePlugin({ mcpServers: { everything: { command: 'npx', args: ['server-everything'] } }, slack: { botToken: 'xoxb-1', channels: { default: 'C1' } } });
    `);
    expect(loaded).toEqual([]);
  });

  it('calling one provider loads its own SDK only: an application may have installed just that one', () => {
    expect(heavyLoadedAfter(`await import('./activities/providers/anthropic.ts');`)).toEqual(['/node_modules/@anthropic-ai/sdk/']);
    expect(heavyLoadedAfter(`
      await import('./activities/providers/openai.ts');
      await import('./activities/providers/openai-responses.ts');
    `)).toEqual(['/node_modules/openai/']);
  });

  it('sees each of them once it is used (the check above can fail)', () => {
    const loaded = heavyLoadedAfter(`
      await import('openai');
      await import('@anthropic-ai/sdk');
      await import('./activities/mcp/mcp-tool-source.ts');
      await import('./activities/slack/slack-web-client.ts');
    `);
    expect(loaded).toEqual(HEAVY);
  });
});
