/**
 * `turnpike queue backlog` before it reaches Temporal: an empty queue name is a usage error
 * (exit 2) with nothing sent (no client is given, so a connection attempt would fail otherwise),
 * and the help names exit code 5. What it reads from a server is tested in
 * test/integration/fairness-live-queue.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_CODES, runCli } from '../../cli/main.js';

async function run(...argv: string[]) {
  const output = { stdout: '', stderr: '' };
  const code = await runCli(argv, { stdout: { write: (chunk: string) => (output.stdout += chunk) }, stderr: { write: (chunk: string) => (output.stderr += chunk) } });
  return { code, ...output };
}

describe('turnpike queue backlog', () => {
  it('refuses an empty queue name as a usage error, before connecting', async () => {
    const refused = await run('queue', 'backlog', 'turnpike', '');
    expect(refused.code).toBe(EXIT_CODES.usage);
    expect(refused.stderr).toContain('expected a task queue name, not an empty one');
    expect(refused.stdout).toBe('');
  });

  it('says in its help and the program\'s that it exits 5 while tasks wait', async () => {
    const help = await run('queue', 'backlog', '--help');
    expect(help.code).toBe(EXIT_CODES.ok);
    expect(help.stdout).toMatch(/exits 5 when any wait/);
    expect(help.stdout).toContain('switch only when it\nexits 0');
    expect(EXIT_CODES.backlog).toBe(5);
    const program = await run('--help');
    expect(program.stdout).toMatch(/5 {2}queue backlog: tasks wait on a task queue it read/);
  });
});
