/**
 * The worker's POST of a push notification (activities/a2a-push/push-request.ts) against a real
 * local receiver on 127.0.0.1. A name's addresses come from a resolver the test gives (a name that
 * resolved to a public address when it was registered and to 127.0.0.1 now, as DNS rebinding
 * makes it): the connection is refused before anything is sent, unless the allow-list lets it
 * through, which shows the connection goes where the resolver said. One test uses the OS resolver
 * on `localhost`, which resolves to loopback on every machine.
 */
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postPush, type PushResolver } from '../../activities/a2a-push/push-request.js';
import { checkedPushAllowList, NOTHING_ALLOWED } from '../../activities/a2a-push/receiver-addresses.js';

let server: http.Server;
let port: number;
const received: Array<{ host: string | undefined; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ host: request.headers.host, body });
      response.writeHead(request.url === '/gone' ? 410 : 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A resolver that answers `addresses` for every name, and records what it was asked. */
function resolverOf(addresses: LookupAddress[]): PushResolver & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign(async (host: string) => {
    asked.push(host);
    return addresses;
  }, { asked });
}

const send = (url: string, resolve: PushResolver | undefined, allow = NOTHING_ALLOWED) =>
  postPush(url, { 'content-type': 'application/a2a+json' }, '{"n":1}', resolve ? { allow, resolve } : { allow }, new AbortController().signal, 5_000);

describe('postPush', () => {
  it('refuses to connect to a name that resolves to 127.0.0.1 now, and sends nothing', async () => {
    const before = received.length;
    const rebound = resolverOf([{ address: '127.0.0.1', family: 4 }]);
    expect(await send(`http://hooks.example.com:${port}/hook`, rebound)).toEqual({ refused: 'hooks.example.com resolves to 127.0.0.1, a private, loopback, link-local or reserved address' });
    expect(rebound.asked).toEqual(['hooks.example.com']);
    expect(received.length).toBe(before);
  });

  it('refuses when any one of the addresses is private, even if a public one comes first', async () => {
    const before = received.length;
    const mixed = resolverOf([{ address: '93.184.216.34', family: 4 }, { address: '::ffff:169.254.169.254', family: 6 }]);
    expect(await send(`http://hooks.example.com:${port}/hook`, mixed)).toEqual({ refused: 'hooks.example.com resolves to ::ffff:169.254.169.254, a private, loopback, link-local or reserved address' });
    expect(received.length).toBe(before);
  });

  it('refuses a URL whose host is a private address without resolving anything', async () => {
    const resolver = resolverOf([]);
    expect(await send(`http://127.0.0.1:${port}/hook`, resolver)).toEqual({ refused: '127.0.0.1 is a private, loopback, link-local or reserved address' });
    expect(await send(`http://[::1]:${port}/hook`, resolver)).toEqual({ refused: '::1 is a private, loopback, link-local or reserved address' });
    expect(resolver.asked).toEqual([]);
  });

  it('refuses localhost as the OS resolves it', async () => {
    const answer = await send(`http://localhost:${port}/hook`, undefined);
    expect(answer).toMatchObject({ refused: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), a private/) as unknown as string });
  });

  it('connects where the resolver said when the allow-list allows it, by address or by name, and answers the status', async () => {
    const before = received.length;
    const rebound = resolverOf([{ address: '127.0.0.1', family: 4 }]);
    expect(await send(`http://hooks.example.com:${port}/hook`, rebound, checkedPushAllowList(['127.0.0.1/32'], 'test'))).toEqual({ status: 200 });
    expect(await send(`http://hooks.internal:${port}/gone`, rebound, checkedPushAllowList(['hooks.internal'], 'test'))).toEqual({ status: 410 });
    expect(await send(`http://127.0.0.1:${port}/hook`, undefined, checkedPushAllowList(['127.0.0.0/8'], 'test'))).toEqual({ status: 200 });
    expect(received.slice(before)).toEqual([
      { host: `hooks.example.com:${port}`, body: '{"n":1}' },
      { host: `hooks.internal:${port}`, body: '{"n":1}' },
      { host: `127.0.0.1:${port}`, body: '{"n":1}' },
    ]);
  });

  it('throws (a network failure, retried) when the name does not resolve', async () => {
    const nothing: PushResolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }));
    await expect(send(`http://nowhere.invalid:${port}/hook`, nothing)).rejects.toThrow(/ENOTFOUND/);
  });
});
