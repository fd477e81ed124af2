import { fileURLToPath } from 'node:url';

/**
 * The app's workflows file (its own workflows and turnpike's), as both test files give it to
 * `createTestEnvironment`: bundled by the first environment that needs it and reused by the rest.
 */
export const ORDER_DESK_WORKFLOWS = fileURLToPath(new URL('../src/workflows.js', import.meta.url));
