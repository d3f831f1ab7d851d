import { B64TOKEN } from '../accounts/api-token.js';

/** The token of a well-formed Authorization header, or why the header is refused. */
export type BearerParseResult = { ok: true; token: string } | { ok: false; detail: string };

/**
 * Reads the bearer token from a request's raw header list (Node's `rawHeaders`: name, value, name,
 * value, ...), which keeps repeated headers: Node's `headers.authorization` silently keeps only the
 * first of two, so a request carrying two tokens would otherwise be judged by one of them.
 *
 * Accepted: exactly one `Authorization` header whose value is exactly `Bearer`, one space, and an
 * RFC 6750 token (`A-Z a-z 0-9 - . _ ~ + /`, then `=` padding). The scheme is case-sensitive (spec
 * §5 names it `Bearer`); no other whitespace, no quotes, no comma-joined second value.
 *
 * Leading and trailing spaces or tabs of a header line are not part of the field value (RFC 9110
 * §5.5) and Node's HTTP parser strips them before the service sees the value; CR or LF inside a
 * value is refused by that parser with 400 before any route runs.
 *
 * @example
 * ```ts
 * readBearerToken(['Authorization', 'Bearer jh_inf_abc']) // { ok: true, token: 'jh_inf_abc' }
 * readBearerToken(['Authorization', 'bearer jh_inf_abc']) // { ok: false, detail: '...' }
 * ```
 */
export function readBearerToken(rawHeaders: readonly string[]): BearerParseResult {
  let value: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() !== 'authorization') continue;
    if (value !== undefined)
      return { ok: false, detail: 'more than one Authorization header; send exactly one: "Authorization: Bearer <API_KEY>"' };
    value = rawHeaders[i + 1] as string;
  }
  if (value === undefined) return { ok: false, detail: 'missing Authorization header; send "Authorization: Bearer <API_KEY>"' };
  if (value.length === 0) return { ok: false, detail: 'empty Authorization header; send "Authorization: Bearer <API_KEY>"' };
  if (!value.startsWith('Bearer ')) {
    return {
      ok: false,
      detail: 'malformed Authorization header: the scheme must be "Bearer" (case-sensitive) followed by one space and the token',
    };
  }
  const token = value.slice('Bearer '.length);
  if (token.length === 0) return { ok: false, detail: 'malformed Authorization header: no token after "Bearer "' };
  if (!B64TOKEN.test(token)) {
    return {
      ok: false,
      detail:
        'malformed Authorization header: the token must follow "Bearer " directly, with no extra spaces, tabs, quotes, commas or line breaks, and consist of A-Z a-z 0-9 - . _ ~ + / (then = padding)',
    };
  }
  return { ok: true, token };
}
