/** A piece of a model step as the provider streams it; see `ProviderCallOptions.onDelta`. */
export type ModelStreamDelta =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string };

/** Called by a streaming provider for each delta, in order, as it arrives. Must not throw. */
export type ModelStreamListener = (delta: ModelStreamDelta) => void;
