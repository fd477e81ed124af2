/**
 * Which A2A push receivers turnpike may reach. A push config's URL comes from an A2A caller, not
 * an operator, so a receiver on a private network (loopback, RFC 1918, link-local with the cloud
 * metadata service, unique-local, CGNAT, multicast, unspecified, reserved) is refused unless the
 * operator allowed it: the API refuses such a URL when it is registered (a2a-push-configs.ts), and
 * the worker refuses to connect to such an address when it delivers (push-request.ts), whatever
 * the receiver's name resolved to then.
 *
 * The ranges are Node's own `net.BlockList`, which also matches an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`) against the IPv4 ranges. IPv6 forms that carry an IPv4 address (NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are checked by the address they carry.
 *
 * An allow-list (`A2aOptions.pushAllow`, the worker's `a2aPushAllow`, or `TURNPIKE_A2A_PUSH_ALLOW`)
 * lets chosen private receivers through: CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses, or
 * host names (`hooks.internal`, `localhost`), whose every address is then allowed.
 */
import { BlockList, isIP } from 'node:net';

/** The refused ranges, as [address, prefix] by family; each is named in docs/protocols.md. */
const PRIVATE_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", with the unspecified 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, with the cloud metadata service 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with the broadcast 255.255.255.255
];
const PRIVATE_V6: Array<[string, number]> = [
  ['::', 96], // unspecified ::, loopback ::1 and the deprecated IPv4-compatible ::a.b.c.d
  ['64:ff9b:1::', 48], // NAT64 for local use
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const PRIVATE = new BlockList();
for (const [address, prefix] of PRIVATE_V4) PRIVATE.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of PRIVATE_V6) PRIVATE.addSubnet(address, prefix, 'ipv6');

/** An address without its URL brackets or IPv6 zone. */
function bare(address: string): string {
  return address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
}

/** The IPv4 address an IPv6 one carries by NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`), if any. */
function embeddedV4(address: string): string | undefined {
  const words = expandV6(address);
  if (!words) return undefined;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted IPv4 part included). */
function expandV6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((word) => parseInt(word, 16)) : []);
  const first = parse(head);
  const last = parse(tail);
  const words = tail === undefined ? first : [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : undefined;
}

/** True for an address (IPv4 or IPv6, bracketed or not) in a refused range; false for a public one or a name. */
export function isPrivateAddress(address: string): boolean {
  const ip = bare(address);
  const family = isIP(ip);
  if (family === 4) return PRIVATE.check(ip, 'ipv4');
  if (family !== 6) return false;
  if (PRIVATE.check(ip, 'ipv6')) return true;
  const carried = embeddedV4(ip);
  return carried !== undefined && PRIVATE.check(carried, 'ipv4');
}

/** `localhost` and its subdomains (RFC 6761), which resolve to loopback whatever DNS says. */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The private receivers an operator allowed, checked. */
export interface PushAllowList {
  /** True for an address (IPv4 or IPv6, no brackets) in an allowed CIDR. */
  readonly allowsAddress: (address: string, family: 'ipv4' | 'ipv6') => boolean;
  readonly hosts: ReadonlySet<string>;
  /** The entries as given, for messages. */
  readonly entries: readonly string[];
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Checks the entries (CIDRs, addresses, host names); a bad one is refused with `where` and the reason. */
export function checkedPushAllowList(entries: readonly string[] | undefined, where: string): PushAllowList {
  const addresses = new BlockList();
  const hosts = new Set<string>();
  for (const given of entries ?? []) {
    const entry = given.trim().toLowerCase();
    const [address = '', prefixText, ...more] = entry.split('/');
    const ip = bare(address);
    const family = isIP(ip);
    if (family !== 0) {
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (more.length > 0 || !/^\d+$/.test(prefixText ?? String(max)) || prefix > max) throw new TypeError(`${where}: ${JSON.stringify(given)} is not a CIDR (e.g. 10.0.0.0/8, fd00::/8) or an address`);
      addresses.addSubnet(ip, prefix, family === 4 ? 'ipv4' : 'ipv6');
    } else if (prefixText === undefined && HOST_NAME.test(entry.replace(/\.$/, ''))) {
      hosts.add(entry.replace(/\.$/, ''));
    } else {
      throw new TypeError(`${where}: ${JSON.stringify(given)} is neither a CIDR, an address nor a host name`);
    }
  }
  return { allowsAddress: (address, family) => addresses.check(address, family), hosts, entries: [...(entries ?? [])] };
}

/** `TURNPIKE_A2A_PUSH_ALLOW`: entries separated by commas (or whitespace); none when unset. */
export function pushAllowFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const value = env.TURNPIKE_A2A_PUSH_ALLOW?.trim();
  return value ? value.split(/[\s,]+/).filter((entry) => entry !== '') : undefined;
}

export const NOTHING_ALLOWED: PushAllowList = checkedPushAllowList([], 'NOTHING_ALLOWED');

function allowedAddress(allow: PushAllowList, address: string): boolean {
  const ip = bare(address);
  const family = isIP(ip);
  return family !== 0 && allow.allowsAddress(ip, family === 4 ? 'ipv4' : 'ipv6');
}

function allowedHost(allow: PushAllowList, host: string): boolean {
  return allow.hosts.has(bare(host).toLowerCase().replace(/\.$/, ''));
}

/**
 * Why a receiver URL is refused when it is registered, or undefined when it is not: its host is a
 * private address, or `localhost`, and not allowed. Other names are not resolved here (what they
 * resolve to may change); the worker checks the address it connects to.
 */
export function refusedReceiverUrl(url: URL, allow: PushAllowList): string | undefined {
  const host = url.hostname;
  if (allowedHost(allow, host)) return undefined;
  if (isLocalhostName(host)) return `its host ${host} is this machine's`;
  if (isPrivateAddress(host) && !allowedAddress(allow, host)) return `its host ${host} is a private, loopback, link-local or reserved address`;
  return undefined;
}

/** Why the worker refuses to connect to `address` for the receiver named `host`, or undefined when it may. */
export function refusedReceiverAddress(host: string, address: string, allow: PushAllowList): string | undefined {
  if (!isPrivateAddress(address) || allowedAddress(allow, address) || allowedHost(allow, host)) return undefined;
  return bare(host) === bare(address) ? `${bare(address)} is a private, loopback, link-local or reserved address` : `${host} resolves to ${bare(address)}, a private, loopback, link-local or reserved address`;
}
