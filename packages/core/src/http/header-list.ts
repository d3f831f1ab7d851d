import type { RequestHeaders } from './request-headers.js';

/** At most this many headers are looked at: Node's default 16 KiB head holds fewer, a hostile one is cut. */
const MAX_HEADERS = 200;

/**
 * The headers of a request as `[lower-case name, value]` pairs, repeated headers as arrays. A
 * fetch `Headers` (or anything with `forEach`) is enumerated; an object with only `get` cannot be,
 * so only the names in `known` are read from it.
 * @internal
 */
export function listHeaders(headers: RequestHeaders, known: readonly string[] = []): [string, string | string[]][] {
  const out: [string, string | string[]][] = [];
  const push = (name: string, value: unknown): void => {
    if (out.length >= MAX_HEADERS) return;
    if (typeof value === 'string') out.push([name.toLowerCase(), value]);
    else if (Array.isArray(value)) out.push([name.toLowerCase(), value.filter((v): v is string => typeof v === 'string')]);
  };
  const forEach = (headers as { forEach?: unknown }).forEach;
  if (typeof forEach === 'function') {
    (forEach as (cb: (value: string, name: string) => void) => void).call(headers, (value, name) => push(name, value));
    return out;
  }
  const get = (headers as { get?: unknown }).get;
  if (typeof get === 'function') {
    for (const name of known) push(name, (get as (name: string) => string | null).call(headers, name) ?? undefined);
    return out;
  }
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) push(name, value);
  return out;
}
