/**
 * `npx turnpike codec-server` as an operator runs it: the CLI in a child process, on a free
 * port, with the arguments given. Resolves once it prints the endpoint it listens on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/dev-server.js';

const BIN = fileURLToPath(new URL('../../bin/turnpike.js', import.meta.url));

export interface CodecServerProcess {
  /** What the Temporal CLI's `--codec-endpoint` and the Web UI's codec setting take. */
  endpoint: string;
  stop(): Promise<void>;
}

/** `env` adds to this process's environment, e.g. `TURNPIKE_CONTENT_STORE` for the workers' store. */
export async function startCodecServer(extraArguments: string[] = [], env: Record<string, string> = {}): Promise<CodecServerProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [BIN, 'codec-server', '--port', String(port), '--json', ...extraArguments], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /"codecEndpoint":\s*"([^"]+)"/.exec(output);
      if (listening) resolve(listening[1]);
    });
    child.once('exit', (code) => reject(new Error(`turnpike codec-server exited with ${code}: ${output}`)));
  });
  return {
    endpoint,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
