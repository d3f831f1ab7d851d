import { randomInt } from 'node:crypto';

/**
 * RFC 6750 `b64token`: what may follow `Bearer ` in an Authorization header. Tokens outside it
 * could not be sent, so the accounts file refuses them.
 */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Shortest token accepted: {@link maskToken} then still hides at least 8 characters. */
export const MIN_TOKEN_LENGTH = 16;
/** Longest token accepted. */
export const MAX_TOKEN_LENGTH = 512;

/** Why `token` is not acceptable as a key secret, or undefined when it is. @internal */
export function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string') return 'must be a string';
  if (token.length < MIN_TOKEN_LENGTH || token.length > MAX_TOKEN_LENGTH) {
    return `must have ${MIN_TOKEN_LENGTH} to ${MAX_TOKEN_LENGTH} characters, got ${token.length}`;
  }
  if (!B64TOKEN.test(token)) return 'must consist of A-Z a-z 0-9 - . _ ~ + / (then = padding), as a bearer token (RFC 6750)';
  return undefined;
}

/** How many trailing characters the masked form shows. */
const SHOWN_TAIL = 4;
/** A prefix ends at the last `_` or `-` within this many leading characters. */
const MAX_PREFIX_LENGTH = 12;
/** At least this many characters stay hidden; a prefix is dropped from the masked form otherwise. */
const MIN_HIDDEN = 8;

/**
 * The masked form of a token (spec §2.1 `masked`: "key prefix plus last characters"): the prefix
 * (the token up to its last `_` or `-` within the first 12 characters, e.g. `jh_inf_`), `…`, and the
 * last 4 characters. The prefix is left out when showing it would leave fewer than 8 characters hidden.
 *
 * @example
 * ```ts
 * maskToken('jh_inf_Zk3p9QwErTy0uIoPaSdFgHjKl4b2') // 'jh_inf_…l4b2'
 * ```
 */
export function maskToken(token: string): string {
  const head = token.slice(0, MAX_PREFIX_LENGTH);
  const cut = Math.max(head.lastIndexOf('_'), head.lastIndexOf('-'));
  const prefix = cut < 0 ? '' : head.slice(0, cut + 1);
  const tail = token.slice(-SHOWN_TAIL);
  const hidden = token.length - prefix.length - SHOWN_TAIL;
  return `${hidden >= MIN_HIDDEN ? prefix : ''}…${tail}`;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A new token: `prefix` + 32 base62 characters (190 bits from the CSPRNG, or from `random` when
 * given, for reproducible tests).
 */
export function generateToken(prefix: string, random?: () => number): string {
  let out = prefix;
  for (let i = 0; i < 32; i++) {
    const index = random === undefined ? randomInt(62) : Math.min(61, Math.floor(random() * 62));
    out += BASE62[index];
  }
  return out;
}
