import ipaddr from 'ipaddr.js';
import type { AddressPolicy, AddressVerdict } from './address-policy.js';
import { receiverRefused } from './receiver-refusal.js';

/** A receiver URL that passed the text checks. @internal */
export interface CheckedReceiverUrl {
  url: URL;
  /** The host name to resolve (WHATWG-normalized, trailing dot kept), or null for an IP literal. */
  hostname: string | null;
  /**
   * The verdict on the IP-literal host (already allowed), or on the first loopback address
   * `localhost` is pinned to; null for a host name to resolve.
   */
  literal: AddressVerdict | null;
  /** For `localhost`: the other allowed loopback address (`::1` after `127.0.0.1`), tried when the first refuses; else empty. */
  fallbacks: AddressVerdict[];
}

/** Text checks of {@link checkReceiverUrl}. @internal */
export interface ReceiverUrlRules {
  allowInsecure: boolean;
  maxUrlLength: number;
}

/**
 * The loopback addresses `localhost` is pinned to, in the order they are tried: the name is never
 * looked up (a hosts file or resolver could point it anywhere), and RFC 6761 reserves it for
 * loopback. `127.0.0.1` first, since most local servers listen there; `::1` for those that listen on
 * IPv6 only (Node's `listen(port, 'localhost')` may).
 */
const LOCALHOST_ADDRESSES = ['127.0.0.1', '::1'] as const;

// Names that only mean something inside a network: refused without a lookup, as the resolver
// (or the search domains of /etc/resolv.conf) would send them somewhere internal.
const BLOCKED_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa'];

// C0 controls, space, DEL and C1 controls: `new URL()` silently strips some of them (tab, newline),
// so a URL holding one is not the URL it looks like.
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;

/**
 * The synchronous half of the SSRF guard: scheme, userinfo, fragment, length, host name and
 * IP-literal checks. Relies on WHATWG `new URL()` to normalize IPv4 notations (decimal
 * `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`, percent-encoded, full-width
 * digits all become `127.0.0.1`; out-of-range forms throw) and IPv6 literals (compressed, hex
 * instead of dotted, zone ids refused), then classifies the result with ipaddr.js.
 * @throws DeliveryError `ERR_RECEIVER_REFUSED`
 * @internal
 */
export function checkReceiverUrl(text: string, rules: ReceiverUrlRules, policy: AddressPolicy): CheckedReceiverUrl {
  if (typeof text !== 'string' || text.length === 0) throw receiverRefused('invalid_url', 'the URL is empty or not a string');
  if (text.length > rules.maxUrlLength) {
    throw receiverRefused('too_long', `the URL is longer than ${rules.maxUrlLength} characters`);
  }
  if (CONTROL_OR_SPACE.test(text) || text.includes('\\')) {
    throw receiverRefused('invalid_url', 'the URL holds whitespace, control characters or a backslash');
  }
  const scheme = /^(https?):\/\/(?!\/)/i.exec(text)?.[1]?.toLowerCase();
  if (scheme !== 'https' && !(scheme === 'http' && rules.allowInsecure)) {
    throw receiverRefused(
      'scheme',
      rules.allowInsecure ? 'the URL must start with https:// or http://' : 'the URL must start with https://',
    );
  }
  // The authority as written: `new URL()` drops an empty userinfo (`https://@host`), so look at the text.
  const authority = text.slice(scheme.length + 3).split(/[/?#]/, 1)[0] ?? '';
  if (authority.includes('@')) throw receiverRefused('userinfo', 'the URL must not carry a user name or password');
  if (text.includes('#')) throw receiverRefused('fragment', 'the URL must not have a fragment');

  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw receiverRefused('invalid_url', 'not a valid URL', {}, cause);
  }
  if (url.username !== '' || url.password !== '') throw receiverRefused('userinfo', 'the URL must not carry a user name or password');
  if (url.port === '0') throw receiverRefused('port', 'port 0 is not a port one can connect to');

  const host = url.hostname;
  if (host.startsWith('[')) return { url, hostname: null, literal: checkLiteral(host.slice(1, -1), policy), fallbacks: [] };
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return { url, hostname: null, literal: checkLiteral(host, policy), fallbacks: [] };
  if (ipaddr.isValid(host)) {
    // `new URL()` turns every IPv4 notation it knows into dotted decimal; anything left is an odd form.
    throw receiverRefused('ip_notation', `the host ${JSON.stringify(host)} is an IP address in an unusual notation`, { host });
  }
  const pinned = pinLocalhost(host, policy);
  if (pinned !== undefined) return { url, hostname: null, literal: pinned[0], fallbacks: pinned.slice(1) };
  checkHostName(host);
  return { url, hostname: host, literal: null, fallbacks: [] };
}

/**
 * For `localhost` (or `localhost.`) when the policy allows a loopback address: the allowed ones of
 * {@link LOCALHOST_ADDRESSES}, in order, at least one. Undefined for any other name, or when no
 * loopback address is allowed (the name is then refused as a local name, as before).
 */
function pinLocalhost(host: string, policy: AddressPolicy): [AddressVerdict, ...AddressVerdict[]] | undefined {
  if (host !== 'localhost' && host !== 'localhost.') return undefined;
  const allowed = LOCALHOST_ADDRESSES.map((address) => policy.check(address)).filter(
    (verdict): verdict is AddressVerdict => verdict?.allowed === true,
  );
  const [first, ...rest] = allowed;
  return first === undefined ? undefined : [first, ...rest];
}

function checkLiteral(text: string, policy: AddressPolicy): AddressVerdict {
  const verdict = policy.check(text);
  if (verdict === undefined) throw receiverRefused('ip_notation', `the host ${JSON.stringify(text)} is not an IP address ipaddr.js reads`);
  return allowedOrRefused(verdict);
}

/** Returns an allowed verdict or throws the `address` refusal. @internal */
export function allowedOrRefused(verdict: AddressVerdict, host?: string): AddressVerdict {
  if (verdict.allowed) return verdict;
  // For a host name, the message does not say which address it resolved to: it goes back to the
  // API caller, who could otherwise map the service's internal DNS. Logs keep it in `detail`.
  const message =
    host === undefined
      ? verdict.range === 'cloudMetadata'
        ? `${verdict.address} is a cloud metadata address`
        : `${verdict.address} is in the ${verdict.range} range, not a public address`
      : `${host} resolves to a non-public address`;
  throw receiverRefused('address', message, {
    address: verdict.address,
    range: verdict.range,
    ...(host === undefined ? {} : { host }),
  });
}

function checkHostName(host: string): void {
  // One trailing dot is the absolute form of the same name (`localhost.` is `localhost`).
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) throw receiverRefused('too_long', 'the host name is empty or longer than 253 characters');
  if (name.split('.').some((label) => label.length === 0))
    throw receiverRefused('host_name', `the host ${JSON.stringify(host)} has an empty label`);
  const blocked = BLOCKED_SUFFIXES.find((suffix) => name === suffix || name.endsWith(`.${suffix}`));
  if (blocked !== undefined) throw receiverRefused('host_name', `${JSON.stringify(host)} is a local name (.${blocked})`, { host });
  // A single label is completed by the resolver's search domains: an internal name in disguise.
  if (!name.includes('.')) throw receiverRefused('host_name', `${JSON.stringify(host)} is not a fully qualified host name`, { host });
}
