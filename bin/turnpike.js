#!/usr/bin/env node
// `npx turnpike`: runs the TypeScript CLI (cli/main.ts) with tsx's loader registered in this
// process, so it works from the repository without a build step. In-process rather than a child
// `node --import tsx`: stdio, signals and the exit code need no forwarding.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
await main();
