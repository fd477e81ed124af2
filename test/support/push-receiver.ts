/**
 * A webhook receiver for A2A push notifications, on a free port of 127.0.0.1: it checks each
 * notification as docs/protocols.md tells receivers to (`checkPushNotification`: signature,
 * timestamp, token), and with `check` as well when given (a JWT receiver's `verifyA2aPush`),
 * answers 401 to one that fails a check, and records what it took. It can be told to answer 503
 * to the first attempts of each notification.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkPushNotification } from '../../activities/a2a-push/push-signature.js';

export interface ReceivedNotification {
  delivery: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The body exactly as it came. */
  text: string;
}

export interface PushReceiver {
  url: string;
  /** Notifications taken (answered 2xx), in the order they came. */
  taken: ReceivedNotification[];
  /** Every request, with the status it was answered. */
  attempts: Array<{ delivery: string; status: number; refusal?: string }>;
  close(): Promise<void>;
}

/** A further check of a request: the reason it is refused, or undefined. */
export type PushCheck = (text: string, headers: IncomingHttpHeaders) => Promise<string | undefined>;

export async function startPushReceiver(token: () => string, options: { failFirst?: number; check?: PushCheck } = {}): Promise<PushReceiver> {
  const taken: ReceivedNotification[] = [];
  const attempts: PushReceiver['attempts'] = [];
  const failures = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const delivery = String(request.headers['x-turnpike-delivery'] ?? '');
      let refusal: string | undefined;
      try {
        refusal = checkPushNotification({ token: token(), body: text, headers: request.headers }) ?? (await options.check?.(text, request.headers));
      } catch (error) {
        // The check could not be made (the JWKS unreachable): turnpike sends the notification again.
        attempts.push({ delivery, status: 503, refusal: String(error) });
        response.writeHead(503).end();
        return;
      }
      if (refusal) {
        attempts.push({ delivery, status: 401, refusal });
        response.writeHead(401).end();
        return;
      }
      const failed = failures.get(delivery) ?? 0;
      if (failed < (options.failFirst ?? 0)) {
        failures.set(delivery, failed + 1);
        attempts.push({ delivery, status: 503 });
        response.writeHead(503).end();
        return;
      }
      attempts.push({ delivery, status: 200 });
      taken.push({ delivery, headers: request.headers, body: JSON.parse(text) as Record<string, unknown>, text });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/a2a-push`,
    taken,
    attempts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
