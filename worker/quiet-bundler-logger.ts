/**
 * The logger turnpike gives the SDK's workflow bundler wherever it bundles (a worker's bundle,
 * `bundleWorkflows`, the bundle replay runs on): the bundler is chatty at info level, so this
 * keeps its warnings and errors only.
 */
export const quietBundlerLogger = {
  trace() {},
  debug() {},
  info() {},
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
  log() {},
};
