/**
 * `turnpike/testing`: test your own tools, approval policies and workflows in milliseconds, with
 * any test runner (vitest, jest, `node:test`). Temporal's time-skipping test server
 * (`@temporalio/testing`, an optional peer; the server itself from Maven Central, see
 * `ensureTestServer`) with a turnpike worker on it, a scripted model whose steps are plain data,
 * and helpers to decide what turns park. See docs/testing.md.
 */
export { createTestEnvironment, TestEnvironment, type TestEnvironmentOptions, type TestParkedCall, type TestTurn, type TestTurnInput } from './test-environment.js';
export { call, isScript, script, text, type Script, type ScriptPart, type ScriptStep } from './script.js';
export { expectTurn, matches, TurnExpectation, TurnExpectationError } from './expect-turn.js';
export { ensureTestServer, testServerDirectory, TEST_SERVER_VERSION, TestServerUnavailableError, type EnsureTestServerOptions } from './test-server.js';
