/**
 * The approval dashboard's static files: the page, its stylesheet, and each of its ES modules by
 * name (`DASHBOARD_MODULES`), read once and served as they are. A new module of
 * `api/dashboard/` goes on that list; `test/integration/dashboard.test.ts` fails for any `.js`
 * file there that is not served.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ApiApp } from './route-context.js';

/** The page's modules, which dashboard.js imports by relative URL: each is served beside it. */
const DASHBOARD_MODULES = ['page', 'requests', 'format', 'schema-form', 'progress', 'cards', 'decisions', 'approvals', 'questions', 'listing', 'feed', 'turn-view', 'evaluation-view', 'session', 'keyboard'];
const DASHBOARD_FILES: Record<string, string> = {
  '/': 'index.html',
  '/dashboard.js': 'dashboard.js',
  '/dashboard.css': 'dashboard.css',
  ...Object.fromEntries(DASHBOARD_MODULES.map((name) => [`/${name}.js`, `${name}.js`])),
};
const CONTENT_TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

export function registerDashboardFiles(app: ApiApp): void {
  const dashboardDirectory = fileURLToPath(new URL('./dashboard/', import.meta.url));
  for (const [url, file] of Object.entries(DASHBOARD_FILES)) {
    // Read once: the page is static for the life of the server.
    const body = readFileSync(`${dashboardDirectory}${file}`, 'utf8');
    (app as import('fastify').FastifyInstance).get(url, async (_request, reply) => reply.type(CONTENT_TYPES[file.split('.').pop()!]).send(body));
  }
}
