import { createAddressPolicy, type AddressVerdict } from './address-policy.js';
import type { ResolvedAddress } from './host-resolver.js';
import { resolveSsrfGuardOptions, type SsrfGuardOptions } from './options/ssrf-guard-options.js';
import { receiverRefused } from './receiver-refusal.js';
import { allowedOrRefused, checkReceiverUrl } from './receiver-url.js';

export type { HostResolver, ResolvedAddress } from './host-resolver.js';
export type { SsrfGuardOptions } from './options/ssrf-guard-options.js';

/**
 * Where a checked receiver URL connects: the address, and for `localhost` the other allowed loopback
 * address (`::1`), tried in order when the first refuses the connection.
 */
export interface ReceiverTarget extends ResolvedAddress {
  /** Tried after `address`, in order, when it cannot be connected to. Absent for every host but `localhost`. */
  fallbacks?: readonly ResolvedAddress[];
}

/** Checks webhook receiver URLs against server-side request forgery (spec §4.2, §8). */
export interface SsrfGuard {
  /**
   * Synchronous checks of the URL text: scheme, userinfo, fragment, length, local host names, and
   * IP-literal hosts in any notation (normalized by `new URL()`, then classified). `localhost` passes
   * when a loopback address is allowed (`127.0.0.1` or `::1`, through `allowCidrs` or `allowPrivate`).
   * @returns the parsed URL.
   * @throws DeliveryError `ERR_RECEIVER_REFUSED`, `detail.reason` naming the reason.
   */
  checkUrl(url: string): URL;
  /**
   * {@link SsrfGuard.checkUrl}, then resolves the host (no lookup for an IP literal) and refuses when
   * ANY address is not allowed, so a host with one private record is refused whatever the order.
   * Call it at submission and before every attempt, and connect to the returned address only.
   * `localhost` is never looked up: it is pinned to the allowed loopback addresses, `127.0.0.1`
   * then `::1` (as `fallbacks`); without an allowed loopback address it is refused as a local name.
   * @returns the address to connect to (the first one the resolver gave).
   * @throws DeliveryError `ERR_RECEIVER_REFUSED`; a lookup failure has `detail.reason` `resolve_failed`.
   */
  resolveTarget(url: string | URL): Promise<ReceiverTarget>;
}

/**
 * Creates the SSRF guard of webhook receivers. Only addresses ipaddr.js classifies as `unicast`
 * pass (plus `allowCidrs`, or everything with `allowPrivate`); any port is allowed, and kept for the
 * connection, since a public host may serve webhooks on any port.
 *
 * @example
 * ```ts
 * const guard = createSsrfGuard();
 * guard.checkUrl('https://127.1/'); // throws ERR_RECEIVER_REFUSED (loopback)
 * const { address } = await guard.resolveTarget('https://hooks.example.com/jobhook');
 * // local tests:
 * createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'] });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` on a wrong option.
 */
export function createSsrfGuard(options: SsrfGuardOptions = {}): SsrfGuard {
  const { allowInsecure, allowPrivate, allowCidrs, resolve, maxUrlLength } = resolveSsrfGuardOptions(options);
  const policy = createAddressPolicy({ allowPrivate, allowCidrs });
  const rules = { allowInsecure, maxUrlLength };

  const checkUrl = (url: string): URL => checkReceiverUrl(url, rules, policy).url;

  async function resolveTarget(url: string | URL): Promise<ReceiverTarget> {
    // A URL object is checked again from its text: the guard trusts no earlier parse.
    const checked = checkReceiverUrl(typeof url === 'string' ? url : url.href, rules, policy);
    if (checked.literal !== null) {
      const pinned: ReceiverTarget = target(checked.literal);
      return checked.fallbacks.length === 0 ? pinned : { ...pinned, fallbacks: checked.fallbacks.map(target) };
    }
    const host = checked.hostname ?? '';
    let answers: ResolvedAddress[];
    try {
      answers = await resolve(host);
    } catch (cause) {
      const code = (cause as { code?: unknown } | null)?.code;
      const errorCode = typeof code === 'string' ? code : 'ENOTFOUND';
      throw receiverRefused('resolve_failed', `${host} does not resolve (${errorCode})`, { host, errorCode }, cause);
    }
    if (!Array.isArray(answers) || answers.length === 0) {
      throw receiverRefused('resolve_failed', `${host} has no address`, { host, errorCode: 'ENOTFOUND' });
    }
    const verdicts = answers.map((answer) => {
      const verdict = policy.check(String(answer?.address));
      if (verdict === undefined)
        throw receiverRefused('address', `${host} resolves to ${JSON.stringify(answer?.address)}, not an IP address`, { host });
      return allowedOrRefused(verdict, host);
    });
    return target(verdicts[0] as AddressVerdict);
  }

  return { checkUrl, resolveTarget };
}

function target(verdict: AddressVerdict): ResolvedAddress {
  return { address: verdict.address, family: verdict.family };
}
