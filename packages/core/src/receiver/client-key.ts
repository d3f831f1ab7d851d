import ipaddr from 'ipaddr.js';

/**
 * The key a client's bodies are charged under in the body budget: an IPv4 address as it is, an IPv6
 * address by its /64 (one subscriber's network: a host that owns a /64 has 2^64 addresses to hop
 * between), an IPv4-mapped or NAT64 (64:ff9b::/96) IPv6 address as the IPv4 one it carries. An address that does not parse is kept as
 * given (a test's or a platform's label); none is `''`, one key shared by every unknown client.
 * @internal
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return '';
  // Zone ids (`fe80::1%eth0`) name an interface, not another client.
  const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  if (!ipaddr.isValid(bare)) return address;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const p = v6.parts;
  // NAT64 (64:ff9b::/96) carries every IPv4 client in one /64: the embedded IPv4 address is the client.
  if (v6.range() === 'rfc6052') return `${p[6]! >> 8}.${p[6]! & 255}.${p[7]! >> 8}.${p[7]! & 255}`;
  return `${p[0]!.toString(16)}:${p[1]!.toString(16)}:${p[2]!.toString(16)}:${p[3]!.toString(16)}::/64`;
}
