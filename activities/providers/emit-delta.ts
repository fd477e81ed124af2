import type { ModelStreamDelta, ModelStreamListener } from './stream-delta.js';

/**
 * Wraps the turn's delta listener so that it can never fail a model step: deltas are a preview,
 * the step's result is what counts, and a listener that throws (against its contract) must not
 * turn a good reply into a retried, re-billed call.
 */
export function deltaEmitter(listener: ModelStreamListener | undefined): (delta: ModelStreamDelta) => void {
  if (!listener) return () => {};
  return (delta) => {
    try {
      listener(delta);
    } catch {
      // Ignored on purpose; see above.
    }
  };
}
