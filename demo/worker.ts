/**
 * `npm run worker`: a turnpike worker with the demo tools, against the cluster the
 * environment names (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, ...), with the metrics, health
 * and shutdown settings of README "Configuration". Built on the package's public entry points
 * (`turnpike`, `turnpike/worker`), like an application's own worker.
 */
import { runWorker } from '../worker/index.js';
import { demoTools } from './tools.js';

runWorker({
  tools: demoTools,
  onReady: ({ taskQueue, address, namespace, healthUrl, metricsUrl }) =>
    console.log(
      `turnpike worker polling task queue "${taskQueue}" on ${address} (namespace ${namespace})` +
        (healthUrl ? `; health ${healthUrl}/readyz` : '') +
        (metricsUrl ? `; metrics ${metricsUrl}` : ''),
    ),
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
