#!/usr/bin/env node
// `npx turnpike`. Installed from the package, it runs the built CLI (dist/cli/main.js). In a
// clone of the repository (cli/main.ts is there, tsx is installed) it runs the TypeScript source
// with tsx's loader registered in this process, so no build step is needed; in-process rather
// than a child `node --import tsx`, so stdio, signals and the exit code need no forwarding.
import { existsSync } from 'node:fs';

const source = new URL('../cli/main.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import('../dist/cli/main.js');
}
await cli.main();
