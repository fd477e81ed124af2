/**
 * A gRPC client interceptor that records the size of every request message the Temporal
 * client sends, by method: the bytes a resume really puts on the wire (protobuf body, before
 * HTTP/2 and TLS framing), not an estimate.
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';

export interface RequestSizeRecorder {
  interceptor: Interceptor;
  /** Sizes of the requests sent to `method` (e.g. `UpdateWorkflowExecution`) since the last `take`. */
  take(method: string): number[];
}

export function requestSizeRecorder(): RequestSizeRecorder {
  const sizes = new Map<string, number[]>();
  const interceptor: Interceptor = (options, nextCall) => {
    const method = options.method_definition.path.split('/').pop() ?? options.method_definition.path;
    return new InterceptingCall(nextCall(options), {
      sendMessage(message: unknown, next: (message: unknown) => void) {
        // The Temporal client serializes before gRPC sees the message: this is the encoded body.
        const size = message instanceof Uint8Array ? message.byteLength : Buffer.byteLength(JSON.stringify(message));
        sizes.set(method, [...(sizes.get(method) ?? []), size]);
        next(message);
      },
    });
  };
  return {
    interceptor,
    take(method) {
      const taken = sizes.get(method) ?? [];
      sizes.delete(method);
      return taken;
    },
  };
}
