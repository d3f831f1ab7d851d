import ipaddr from 'ipaddr.js';
import { checkBoolean, checkFunction, checkInteger, optionError } from '@jobhook/core/internal';
import type { AllowedCidr } from '../address-policy.js';
import { defaultResolve, type HostResolver } from '../host-resolver.js';

/** Options of `createSsrfGuard`. */
export interface SsrfGuardOptions {
  /** Allow `http://` receivers (local development). Default `false`: only `https://`. */
  allowInsecure?: boolean;
  /** Allow every non-public address (local tests). Default `false`. */
  allowPrivate?: boolean;
  /** CIDRs allowed despite being non-public, e.g. `['127.0.0.1/32']`. Default none. */
  allowCidrs?: readonly string[];
  /** Default: `dns.promises.lookup(host, { all: true, verbatim: true })`. */
  resolve?: HostResolver;
  /** Longest URL accepted, in characters. Default 2048. */
  maxUrlLength?: number;
}

/** {@link SsrfGuardOptions} checked, with defaults; the CIDRs parsed once, here. @internal */
export interface ResolvedSsrfGuardOptions {
  allowInsecure: boolean;
  allowPrivate: boolean;
  allowCidrs: readonly AllowedCidr[];
  resolve: HostResolver;
  maxUrlLength: number;
}

const WHERE = 'createSsrfGuard';

/**
 * Checks the options of `createSsrfGuard`, applies the defaults and parses `allowCidrs`.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option (an `allowCidrs` entry that is not a CIDR among them).
 * @internal
 */
export function resolveSsrfGuardOptions(options: SsrfGuardOptions = {}): ResolvedSsrfGuardOptions {
  const { allowInsecure = false, allowPrivate = false, allowCidrs = [], resolve = defaultResolve, maxUrlLength = 2048 } = options;
  checkBoolean(WHERE, 'allowInsecure', allowInsecure);
  checkFunction(WHERE, 'resolve', resolve);
  checkInteger(WHERE, 'maxUrlLength', maxUrlLength, { min: 16 });
  checkBoolean(WHERE, 'allowPrivate', allowPrivate);
  if (!Array.isArray(allowCidrs)) throw optionError(WHERE, 'allowCidrs must be an array of CIDR strings');
  const cidrs = allowCidrs.map((text: unknown) => {
    if (typeof text !== 'string' || !ipaddr.isValidCIDR(text)) {
      throw optionError(WHERE, `allowCidrs entry ${JSON.stringify(text)} is not a CIDR such as 127.0.0.1/32`);
    }
    return ipaddr.parseCIDR(text);
  });
  return { allowInsecure, allowPrivate, allowCidrs: cidrs, resolve, maxUrlLength };
}
