/**
 * `npm run temporal-test-server`: finds Temporal's time-skipping test server, or fetches it from
 * Maven Central into turnpike's cache (testing/test-server.ts), and prints the launcher's path.
 * `.ci/run` and `npm test` run it so that a failed fetch reads as one, before any test.
 */
import { ensureTestServer, TestServerUnavailableError } from '../testing/test-server.js';

const quiet = process.argv.includes('--quiet');
ensureTestServer()
  .then((launcher) => {
    if (!quiet) console.log(launcher);
  })
  .catch((error: unknown) => {
    console.error(error instanceof TestServerUnavailableError ? error.message : error);
    process.exit(1);
  });
