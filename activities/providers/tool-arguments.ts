/** A tool call's arguments as a provider sends them (JSON text), read the same way by every provider. */

/**
 * Parses a tool call's arguments. Models sometimes emit invalid JSON; throwing here would fail
 * the whole step (and retrying would just ask again), so the raw text is kept as the input and
 * schema validation later turns it into an error result the model can correct.
 */
export function parseToolArguments(text: string): unknown {
  // OpenAI sends '{}' for a call without arguments, but some compatible endpoints send '':
  // that means "no arguments", not malformed JSON.
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
