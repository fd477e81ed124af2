/**
 * Where the Temporal cluster is, from the environment, the way Temporal's own SDKs and CLI
 * read it: `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, TLS variables and
 * `TEMPORAL_PROFILE` / `TEMPORAL_CONFIG_FILE` profiles. Nothing is hard-coded.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';

export function connectionOptionsFromEnvironment(): ReturnType<typeof loadClientConnectConfig> & { namespace: string } {
  const config = loadClientConnectConfig();
  return {
    ...config,
    connectionOptions: { address: 'localhost:7233', ...config.connectionOptions },
    namespace: config.namespace ?? 'default',
  };
}
