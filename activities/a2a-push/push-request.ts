/**
 * One POST of an A2A push notification to its receiver, over node:http(s) with a `lookup` of its
 * own: the receiver's name is resolved here, and the connection is refused when any address it
 * resolves to is private and not allowed (receiver-addresses.ts), so a name that resolved to a
 * public address when it was registered and to 127.0.0.1 now (DNS rebinding) reaches nothing. A
 * URL whose host is an address is checked as it is (Node does not look such a host up).
 *
 * Each request has a connection of its own (no pool a later request of another policy could reuse).
 * No redirect is followed; the whole exchange (connect, send, the answer's body) is bounded by
 * `timeoutMs` and by `cancelled`.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { refusedReceiverAddress, type PushAllowList } from './receiver-addresses.js';

/** Resolves a host name to all its addresses; the OS resolver (`dns.lookup`) unless a test gives its own. */
export type PushResolver = (host: string) => Promise<LookupAddress[]>;

const osResolver: PushResolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** The connection was refused before it was made: the receiver is private and not allowed. Never retried. */
export class PrivateReceiverError extends Error {
  override name = 'PrivateReceiverError';
}

export interface PushPolicy {
  allow: PushAllowList;
  resolve?: PushResolver;
}

export type PushAnswer = { status: number } | { refused: string };

/** A `lookup` for http(s).request that resolves with `resolve` and fails when an address is refused. */
function guardedLookup(policy: PushPolicy): LookupFunction {
  const resolve = policy.resolve ?? osResolver;
  return (host, options, callback) => {
    resolve(host).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = family ? addresses.filter((address) => address.family === family) : addresses;
        // Every address is checked, not only the one tried first: Node may try the others.
        const refused = addresses.map((address) => refusedReceiverAddress(host, address.address, policy.allow)).find((reason) => reason !== undefined);
        if (refused) return callback(new PrivateReceiverError(refused), '', 0);
        if (usable.length === 0) return callback(Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/**
 * POSTs `body` to `url`; answers the receiver's status, or why the receiver is refused. A network
 * failure (no answer, a timeout, a name that does not resolve) throws; so does `cancelled`.
 */
export async function postPush(url: string, headers: Record<string, string>, body: string, policy: PushPolicy, cancelled: AbortSignal, timeoutMs: number): Promise<PushAnswer> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    const refused = refusedReceiverAddress(host, host, policy.allow);
    if (refused) return { refused };
  }
  const signal = AbortSignal.any([cancelled, AbortSignal.timeout(timeoutMs)]);
  const send = target.protocol === 'https:' ? https.request : http.request;
  try {
    return await new Promise<PushAnswer>((resolve, reject) => {
      const request = send(target, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup: guardedLookup(policy), signal, agent: false }, (response) => {
        response.on('data', () => undefined);
        response.once('end', () => resolve({ status: response.statusCode ?? 0 }));
        response.once('error', reject);
      });
      request.once('error', reject);
      request.end(body);
    });
  } catch (error) {
    if (error instanceof PrivateReceiverError) return { refused: error.message };
    if (cancelled.aborted) throw cancelled.reason;
    throw error;
  }
}
