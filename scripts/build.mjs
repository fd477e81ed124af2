// `npm run build` (and `npm pack`, through prepack): compiles the published entry points to
// dist/ with tsc and copies the dashboard's static files beside the API that serves them.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url);
rmSync(new URL('dist', root), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', new URL('tsconfig.build.json', root).pathname], { stdio: 'inherit' });
cpSync(new URL('api/dashboard', root), new URL('dist/api/dashboard', root), { recursive: true });
