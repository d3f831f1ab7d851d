/**
 * Request headers as adapters have them: Node's `IncomingHttpHeaders` (lower-case keys, arrays for
 * repeats), any record of names to values, or a fetch `Headers`.
 */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>> | { get(name: string): string | null };

/**
 * Reads one header case-insensitively; repeated headers come back as an array.
 * @internal
 */
export function readHeader(headers: RequestHeaders, name: string): string | readonly string[] | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const lower = name.toLowerCase();
  const direct = record[lower];
  if (direct !== undefined) return direct;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === lower) return record[key];
  }
  return undefined;
}

/** The first value of a header, for headers that must appear once. @internal */
export function firstHeader(headers: RequestHeaders, name: string): string | undefined {
  const value = readHeader(headers, name);
  return typeof value === 'string' ? value : value?.[0];
}

/**
 * True for `application/json` and `application/*+json`, with any parameters, as long as a charset
 * parameter, if given, is UTF-8 (the signature is over UTF-8 bytes).
 * @internal
 */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type = '', ...params] = value.split(';');
  const mediaType = type.trim().toLowerCase();
  if (mediaType !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) return false;
  for (const param of params) {
    const [key = '', raw = ''] = param.split('=');
    if (key.trim().toLowerCase() === 'charset') {
      const charset = raw.trim().replace(/^"|"$/g, '').toLowerCase();
      if (charset !== 'utf-8' && charset !== 'utf8') return false;
    }
  }
  return true;
}

/** The most of a request's own header value an error message quotes: anyone can send 16 KiB of it. */
const MAX_QUOTED_CHARS = 80;

/** A header value (or the method) for an error message: `none` when absent, cut to 80 characters with `…`. */
export function quoteHeader(value: string | undefined): string {
  if (value === undefined) return 'none';
  return value.length > MAX_QUOTED_CHARS ? `${value.slice(0, MAX_QUOTED_CHARS)}…` : value;
}
