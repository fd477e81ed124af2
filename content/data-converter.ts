/**
 * turnpike's data converter: its payload codecs around any of the user's own.
 *
 *   encode: compression (payloads of 4 KiB or more) → the user's codecs (e.g. encryption)
 *           → the claim check (payloads of 128 KiB or more go to the content store)
 *
 * Workers (`TurnpikePlugin`), clients (`TurnpikeClient.connect`), the HTTP API and the codec
 * server use the same chain over the same content store, so each reads what the others wrote.
 */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { ClaimCheckCodec } from './claim-check-codec.js';
import type { ContentStore } from './content-store.js';
import { contentStoreFromEnvironment } from './store-from-environment.js';
import { CompressionCodec } from '../codec/payload-codec.js';

export interface TurnpikeCodecOptions {
  /** Where large payloads go. Default: the store `TURNPIKE_CONTENT_STORE` names, opened on first use. */
  contentStore?: ContentStore;
  /** Gzip payloads of 4 KiB or more. Default true. */
  compressPayloads?: boolean;
  /** Payloads this big or bigger (after compression) go to the content store. Default 128 KiB. */
  claimThresholdBytes?: number;
}

/** turnpike's codecs around `own` (the user's), in encoding order; `own` already wrapped is returned as it is. */
export function turnpikeCodecs(own: readonly PayloadCodec[] = [], options: TurnpikeCodecOptions = {}): PayloadCodec[] {
  const user = own.filter((codec) => !(codec instanceof CompressionCodec) && !(codec instanceof ClaimCheckCodec));
  const claimCheck = own.find((codec): codec is ClaimCheckCodec => codec instanceof ClaimCheckCodec);
  return [
    ...(options.compressPayloads === false ? [] : [own.find((codec) => codec instanceof CompressionCodec) ?? new CompressionCodec()]),
    ...user,
    claimCheck ?? new ClaimCheckCodec({ store: options.contentStore ?? contentStoreFromEnvironment, ...(options.claimThresholdBytes ? { thresholdBytes: options.claimThresholdBytes } : {}) }),
  ];
}

/** A data converter with turnpike's codecs (and `existing`'s converters and codecs). */
export function createTurnpikeDataConverter(options: TurnpikeCodecOptions = {}, existing: DataConverter = {}): DataConverter {
  return { ...existing, payloadCodecs: turnpikeCodecs(existing.payloadCodecs ?? [], options) };
}

/** The data converter over the store `TURNPIKE_CONTENT_STORE` names (opened on first use). */
export const turnpikeDataConverter: DataConverter = createTurnpikeDataConverter();
