// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

export default tseslint.config(
  { ignores: ['node_modules/', '**/node_modules/', 'dist/', '**/dist/', '.turnpike/', '.api-report/', 'bench/results/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Plain Node scripts (the build, the CLI's bin).
    files: ['**/*.mjs', 'bin/**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    // The dashboard is plain browser JavaScript served as is.
    files: ['api/dashboard/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
  {
    // The useChat test page, bundled for the browser at test time.
    files: ['test/support/ui-chat-page/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
  {
    // Workflow code is replayed and must stay deterministic: no Node built-ins, no network
    // clients. Side effects belong in activities/ (samples-typescript's hello-world does the same).
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflows are deterministic: do I/O in an activity.' })),
            { name: 'openai', message: 'Model SDKs belong in activities/providers/.' },
            { name: '@anthropic-ai/sdk', message: 'Model SDKs belong in activities/providers/.' },
            { name: '@temporalio/activity', message: 'Activity code does not run in workflows.' },
            { name: '@temporalio/client', message: 'Workflows talk to Temporal through @temporalio/workflow.' },
            { name: '@temporalio/worker', message: 'Workflows talk to Temporal through @temporalio/workflow.' },
            { name: '@temporalio/workflow-streams/client', message: 'Workflows use @temporalio/workflow-streams/workflow.' },
          ],
          patterns: [
            { group: ['openai/*', '@anthropic-ai/sdk/*'], message: 'Model SDKs belong in activities/providers/.' },
            { group: ['../activities/*', '../activities/**'], allowTypeImports: true, message: 'Workflows may only `import type` from activities/.' },
          ],
        },
      ],
    },
  },
);
