import ipaddr from 'ipaddr.js';

/**
 * Addresses of cloud platforms' instance metadata and host services, which hand out the machine's
 * credentials and configuration to whoever on the machine asks. The SSRF guard refuses them even
 * where it allows their range (`allowPrivate`, a wide allow-list CIDR); see {@link isCloudMetadata}.
 */
export const CLOUD_METADATA_ADDRESSES: Readonly<Record<string, string>> = Object.freeze({
  '169.254.169.254': 'instance metadata (AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, ...)',
  '169.254.170.2': 'AWS ECS task metadata and credentials',
  '169.254.0.23': 'Tencent Cloud metadata',
  '168.63.129.16': 'Azure platform (WireServer), a public unicast address',
  '100.100.100.200': 'Alibaba Cloud metadata',
  '192.0.0.192': 'Oracle Cloud metadata',
  'fd00:ec2::254': 'AWS instance metadata over IPv6',
  'fd20:ce::254': 'GCP metadata over IPv6',
});

const METADATA = Object.keys(CLOUD_METADATA_ADDRESSES).map((text) => ipaddr.parse(text));

const IPV4_CARRIERS: ReadonlyArray<[ipaddr.IPv6, number]> = [
  ipaddr.IPv6.parseCIDR('::/96'), // IPv4-compatible (deprecated)
  ipaddr.IPv6.parseCIDR('64:ff9b::/96'), // NAT64 well-known prefix
  ipaddr.IPv6.parseCIDR('64:ff9b:1::/48'), // NAT64 local-use prefix (IPv4 in the last 32 bits at /96)
];

/**
 * The IPv4 addresses an IPv6 address carries, as stacks, NAT64 gateways or tunnels would reach
 * them: IPv4-mapped and -compatible, NAT64 (last 32 bits), 6to4 (bits 16-47), Teredo (server in
 * bits 32-63, client as the complement of the last 32 bits).
 */
function carriedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = addr.parts;
  const v4 = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const last = v4(p[6] as number, p[7] as number);
  if (addr.isIPv4MappedAddress()) return [last];
  if (IPV4_CARRIERS.some((cidr) => addr.match(cidr))) return [last];
  if (p[0] === 0x2002) return [v4(p[1] as number, p[2] as number)];
  if (p[0] === 0x2001 && p[1] === 0)
    return [v4(p[2] as number, p[3] as number), v4(~(p[6] as number) & 0xffff, ~(p[7] as number) & 0xffff)];
  return [];
}

/**
 * The metadata addresses `addr` is or carries (empty when none): the address itself, and for IPv6
 * the IPv4 it embeds, so `::ffff:169.254.169.254` or `64:ff9b::a83f:8110` are caught as well.
 */
export function metadataTargets(addr: ipaddr.IPv4 | ipaddr.IPv6): Array<ipaddr.IPv4 | ipaddr.IPv6> {
  const forms: Array<ipaddr.IPv4 | ipaddr.IPv6> = [addr];
  if (addr.kind() === 'ipv6') forms.push(...carriedIPv4(addr as ipaddr.IPv6));
  return forms.filter((form) => METADATA.some((m) => m.kind() === form.kind() && m.toNormalizedString() === form.toNormalizedString()));
}

/** Whether `cidr` names exactly `target` (a /32 or /128 of that address). */
export function namesExactly(cidr: [ipaddr.IPv4 | ipaddr.IPv6, number], target: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const [base, bits] = cidr;
  return (
    base.kind() === target.kind() &&
    bits === (target.kind() === 'ipv4' ? 32 : 128) &&
    base.toNormalizedString() === target.toNormalizedString()
  );
}
