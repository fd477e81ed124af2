/**
 * Which A2A push receivers turnpike refuses (activities/a2a-push/receiver-addresses.ts): private
 * addresses in every notation `new URL` accepts, `localhost` names, and the allow-list's
 * exceptions; public addresses and names pass.
 */
import { describe, expect, it } from 'vitest';
import { checkedPushAllowList, isPrivateAddress, NOTHING_ALLOWED, pushAllowFromEnvironment, refusedReceiverAddress, refusedReceiverUrl } from '../../activities/a2a-push/receiver-addresses.js';

const refused = (url: string, allow = NOTHING_ALLOWED) => refusedReceiverUrl(new URL(url), allow);

describe('private receiver addresses', () => {
  it('refuses private IPv4 ranges: loopback, RFC 1918, link-local (cloud metadata), CGNAT, this network, multicast, reserved, broadcast', () => {
    for (const address of ['127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255', '192.0.0.170', '198.18.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('passes public IPv4 addresses, including those just outside the ranges', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '11.0.0.1', '126.255.255.255', '128.0.0.1', '223.255.255.255', '192.169.0.1']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('refuses private IPv6 ranges, IPv4-mapped and -compatible forms of private IPv4, and NAT64 and 6to4 forms that carry one', () => {
    for (const address of ['::', '::1', '[::1]', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'fec0::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a00:1', '::ffff:169.254.169.254', '::7f00:1', '::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b:1::1', '2002:7f00:1::', '2002:a9fe:a9fe::1', '0:0:0:0:0:ffff:c0a8:101']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('passes public IPv6 addresses and public IPv4 in IPv6 forms', () => {
    for (const address of ['2001:4860:4860::8888', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', 'fbff::1', 'fe00::1']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
    // A name is not an address: it is checked by what it resolves to, when a notification is sent.
    expect(isPrivateAddress('hooks.example.com')).toBe(false);
  });
});

describe('receiver URLs at registration', () => {
  it('refuses URLs whose host is a private address in any notation new URL accepts (decimal, hex, octal, short, percent-encoded, bracketed, mapped)', () => {
    for (const url of [
      'http://127.0.0.1/hook',
      'https://127.0.0.1:8443/hook',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://0x7f000001/',
      'http://017700000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://0/',
      'http://%31%32%37.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.1.2.3/',
      'http://192.168.0.10/',
      'http://100.100.100.200/',
      'http://[::1]/',
      'http://[::]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://[64:ff9b::7f00:1]/',
    ]) {
      expect(refused(url), url).toMatch(/private, loopback, link-local or reserved address/);
    }
  });

  it('refuses localhost and names under it, in any case and with a trailing dot', () => {
    for (const url of ['http://localhost/', 'http://LOCALHOST:8080/', 'http://localhost./', 'http://receiver.localhost/', 'http://a.b.LocalHost/']) {
      expect(refused(url), url).toMatch(/this machine's/);
    }
  });

  it('passes public addresses and names, which are not resolved at registration', () => {
    for (const url of ['https://hooks.example.com/a2a', 'http://8.8.8.8/', 'http://[2001:4860:4860::8888]/', 'https://localhost.example.com/', 'https://notlocalhost/', 'http://127.0.0.1.example.com/']) {
      expect(refused(url), url).toBeUndefined();
    }
  });

  it('lets through what the allow-list names: CIDRs, single addresses (any notation of them), host names', () => {
    const allow = checkedPushAllowList(['127.0.0.1/32', '10.0.0.0/8', 'fd00::/8', '192.168.5.5', 'localhost', 'Hooks.Internal.'], 'test');
    for (const url of ['http://127.0.0.1:9/', 'http://2130706433/', 'http://[::ffff:127.0.0.1]/', 'http://10.9.8.7/', 'http://[fd00::5]/', 'http://192.168.5.5/', 'http://localhost:3000/', 'http://hooks.internal/']) {
      expect(refused(url, allow), url).toBeUndefined();
    }
    // Only what it names: the rest of each range is still refused.
    for (const url of ['http://127.0.0.2/', 'http://192.168.5.6/', 'http://[::1]/', 'http://169.254.169.254/', 'http://receiver.localhost/', 'http://[fc00::1]/']) {
      expect(refused(url, allow), url).toBeDefined();
    }
  });
});

describe('resolved addresses at delivery', () => {
  it('refuses a name that resolves to a private address, naming both; an allowed name or address passes', () => {
    expect(refusedReceiverAddress('hooks.example.com', '127.0.0.1', NOTHING_ALLOWED)).toBe('hooks.example.com resolves to 127.0.0.1, a private, loopback, link-local or reserved address');
    expect(refusedReceiverAddress('hooks.example.com', '::ffff:10.0.0.1', NOTHING_ALLOWED)).toMatch(/resolves to ::ffff:10\.0\.0\.1/);
    expect(refusedReceiverAddress('127.0.0.1', '127.0.0.1', NOTHING_ALLOWED)).toBe('127.0.0.1 is a private, loopback, link-local or reserved address');
    expect(refusedReceiverAddress('hooks.example.com', '93.184.216.34', NOTHING_ALLOWED)).toBeUndefined();
    expect(refusedReceiverAddress('hooks.internal', '10.1.1.1', checkedPushAllowList(['hooks.internal'], 'test'))).toBeUndefined();
    expect(refusedReceiverAddress('other.internal', '10.1.1.1', checkedPushAllowList(['10.0.0.0/8'], 'test'))).toBeUndefined();
    expect(refusedReceiverAddress('other.internal', '10.1.1.1', checkedPushAllowList(['hooks.internal', '10.2.0.0/16'], 'test'))).toBeDefined();
  });
});

describe('the allow-list', () => {
  it('is read from TURNPIKE_A2A_PUSH_ALLOW, separated by commas or spaces; unset or empty is none', () => {
    expect(pushAllowFromEnvironment({ TURNPIKE_A2A_PUSH_ALLOW: '127.0.0.1/32, 10.0.0.0/8 hooks.internal' })).toEqual(['127.0.0.1/32', '10.0.0.0/8', 'hooks.internal']);
    expect(pushAllowFromEnvironment({ TURNPIKE_A2A_PUSH_ALLOW: ' ' })).toBeUndefined();
    expect(pushAllowFromEnvironment({})).toBeUndefined();
  });

  it('refuses entries that are neither a CIDR, an address nor a host name, saying where', () => {
    for (const entry of ['10.0.0.0/33', '::1/129', '10.0.0.0/8/8', '10.0.0.0/x', 'hooks internal', 'https://hooks.internal/', 'hooks.internal/24', '']) {
      expect(() => checkedPushAllowList([entry], 'a2a.pushAllow'), entry).toThrow(/^a2a\.pushAllow: /);
    }
  });
});
