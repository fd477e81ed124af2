/** The Temporal Web UI of a cluster: ui-server, configured for the cluster's frontend. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ManagedProcess } from './managed-process.js';

export interface WebUi {
  url: string;
  process: ManagedProcess;
}

/** The Web UI server (ui-server, with the built UI embedded) for the cluster's frontend. */
export async function startWebUi(options: { binary: string; address: string; port: number; namespace: string; directory: string; logFile: string; detached?: boolean }): Promise<WebUi> {
  const configDirectory = path.join(options.directory, 'ui', 'config');
  mkdirSync(configDirectory, { recursive: true });
  // ui-server reads <config dir>/<env>.yaml; written each start because the ports may change.
  writeFileSync(
    path.join(configDirectory, 'turnpike.yaml'),
    [
      `temporalGrpcAddress: ${options.address}`,
      'host: 127.0.0.1',
      `port: ${options.port}`,
      'enableUi: true',
      `defaultNamespace: ${options.namespace}`,
      // Plain HTTP on loopback: a Secure cookie would never be sent back.
      'cors:',
      '  cookieInsecure: true',
      'hideLogs: true',
      '',
    ].join('\n'),
  );
  const ui = new ManagedProcess({
    name: 'temporal-ui-server',
    command: options.binary,
    args: ['--root', '/', '--config', configDirectory, '--env', 'turnpike', 'start'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    logFile: options.logFile,
    detached: options.detached,
  });
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!ui.running) throw new Error(`The Web UI server exited while starting (log: ${options.logFile}):\n${ui.output()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok, () => false);
    if (ok) return { url, process: ui };
    if (Date.now() > deadline) {
      await ui.kill();
      throw new Error(`The Web UI did not answer on ${url} within 30s (log: ${options.logFile}).`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
