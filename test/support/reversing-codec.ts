/**
 * A codec standing in for an application's own (encryption): its payloads have an encoding of
 * their own and data no other codec reads. It reverses the serialized payload's bytes.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

const PayloadMessage = proto.temporal.api.common.v1.Payload;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const REVERSED_ENCODING = 'binary/test-reversed';

export class ReversingCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => ({
      metadata: { encoding: encoder.encode(REVERSED_ENCODING) },
      data: PayloadMessage.encode(payload).finish().reverse(),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) =>
      payload.metadata?.encoding && decoder.decode(payload.metadata.encoding) === REVERSED_ENCODING
        ? (PayloadMessage.decode(Uint8Array.from(payload.data ?? []).reverse()) as Payload)
        : payload,
    );
  }
}
