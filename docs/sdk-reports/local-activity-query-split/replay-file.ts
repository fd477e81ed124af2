// Replays a saved history JSON: npx tsx replay-file.ts failing-history.json
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, Runtime, DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
Runtime.install({ logger: new DefaultLogger('ERROR') });
const history = historyFromJSON(JSON.parse(readFileSync(process.argv[2] ?? 'failing-history.json', 'utf8')));
const workflowBundle = await bundleWorkflowCode({
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  logger: new DefaultLogger('ERROR'),
});
try {
  await Worker.runReplayHistory({ workflowBundle }, history, 'replay-check');
  console.log('replay OK');
} catch (e) {
  console.log(`${(e as Error).name}: ${(e as Error).message}`);
  process.exitCode = 1;
}
