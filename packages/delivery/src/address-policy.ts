import ipaddr from 'ipaddr.js';
import { metadataTargets, namesExactly } from './cloud-metadata.js';

/** An address parsed by ipaddr.js. */
type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Ranges ipaddr.js 2.x has no name for, checked before its `range()`. Only one is needed: the
 * deprecated IPv4-compatible IPv6 block `::/96` (`::7f00:1` is 127.0.0.1 to some stacks), which
 * ipaddr.js calls `unicast` apart from `::` and `::1`. Every other range the guard refuses has a
 * name there: `loopback`, `private`, `linkLocal`, `carrierGradeNat`, `uniqueLocal`, `ipv4Mapped`,
 * `rfc6145`, `rfc6052` (NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`), `6to4`, `teredo`,
 * `unspecified` (IPv4 `0.0.0.0/8` too), `multicast`, `broadcast`, `reserved` (240/4, 192.0.0/24,
 * 198.18/15, the documentation blocks, `2001:db8::/32`), `deprecatedSiteLocal`, `discard`, ...
 */
const EXTRA_RANGES: ReadonlyArray<readonly [name: string, cidr: [IpAddress, number]]> = [['ipv4Compatible', ipaddr.parseCIDR('::/96')]];

/** What the policy says about one address. */
export interface AddressVerdict {
  allowed: boolean;
  /**
   * The ipaddr.js range name (or `ipv4Compatible`), `unicast` for public addresses, or
   * `cloudMetadata` for a cloud platform's metadata address (or an IPv6 form carrying one).
   */
  range: string;
  /** The address as written on the wire (IPv6 compressed, no zone id). */
  address: string;
  family: 4 | 6;
}

/** A CIDR of `allowCidrs`, parsed by ipaddr.js. @internal */
export type AllowedCidr = [IpAddress, number];

/** Which non-public addresses are allowed anyway: the SSRF guard's options, checked and parsed. */
export interface AddressPolicyRules {
  allowPrivate: boolean;
  allowCidrs: readonly AllowedCidr[];
}

/**
 * Classifies IP addresses: only ipaddr.js's `unicast` passes, unless allowed by the options. Cloud
 * metadata addresses are refused whatever their range, even with `allowPrivate` or inside an
 * allowed CIDR, unless an `allowCidrs` entry names the address exactly (`169.254.169.254/32`):
 * they hand out the machine's credentials, and a range opened for local receivers
 * (`169.254.0.0/16`, `100.64.0.0/10`, `fd00::/8`) must not open them by accident.
 */
export interface AddressPolicy {
  /** The verdict for an address text, or `undefined` when the text is not an IP address. */
  check(text: string): AddressVerdict | undefined;
}

/** Builds the address classifier of the SSRF guard from its checked rules (`resolveSsrfGuardOptions`). */
export function createAddressPolicy(rules: AddressPolicyRules): AddressPolicy {
  const { allowPrivate, allowCidrs: cidrs } = rules;

  const inAllowedCidr = (addr: IpAddress): boolean => {
    // An IPv4-mapped address also matches the IPv4 CIDR of the address it carries.
    const forms =
      addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? [addr, (addr as ipaddr.IPv6).toIPv4Address()] : [addr];
    return forms.some((form) => cidrs.some((cidr) => cidr[0].kind() === form.kind() && form.match(cidr)));
  };

  return {
    check(text) {
      if (!ipaddr.isValid(text)) return undefined;
      const addr = ipaddr.parse(text);
      const metadata = metadataTargets(addr);
      let range: string;
      let allowed: boolean;
      if (metadata.length > 0) {
        range = 'cloudMetadata';
        allowed = metadata.every((target) => cidrs.some((cidr) => namesExactly(cidr, target)));
      } else {
        range = rangeOf(addr);
        allowed = range === 'unicast' || allowPrivate || inAllowedCidr(addr);
      }
      const family = addr.kind() === 'ipv4' ? 4 : 6;
      if (addr.kind() === 'ipv6') delete (addr as ipaddr.IPv6).zoneId;
      return { allowed, range, address: addr.toString(), family };
    },
  };
}

function rangeOf(addr: IpAddress): string {
  const named = addr.range();
  if (named !== 'unicast') return named;
  for (const [name, cidr] of EXTRA_RANGES) {
    if (cidr[0].kind() === addr.kind() && addr.match(cidr)) return name;
  }
  return named;
}
