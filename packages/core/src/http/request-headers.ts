/**
 * Request headers as adapters have them: Node's `IncomingHttpHeaders` (lower-case keys, arrays for
 * repeats), any record of names to values, or a fetch `Headers`.
 */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>> | { get(name: string): string | null };

/** A header's value as adapters give it: repeated headers come as an array. */
export type HeaderValue = string | readonly string[] | undefined;

/**
 * Reads one header case-insensitively; repeated headers come back as an array.
 * @internal
 */
export function readHeader(headers: RequestHeaders, name: string): HeaderValue {
  return readHeaders(headers, [name.toLowerCase()])[0];
}

/**
 * Reads several headers, each once: `lowerNames` must be lower case (callers compute them once, not
 * per request). A fetch `Headers` answers `get`; a record is looked up by the lower-case name (Node's
 * `IncomingHttpHeaders` holds nothing else), and only when some name is missing are its keys walked,
 * once for all of them, for a record that spells names in another case.
 * @internal
 */
export function readHeaders(headers: RequestHeaders, lowerNames: readonly string[]): HeaderValue[] {
  const values: HeaderValue[] = new Array(lowerNames.length);
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const fetchHeaders = headers as { get(name: string): string | null };
    for (let i = 0; i < lowerNames.length; i++) values[i] = fetchHeaders.get(lowerNames[i]!) ?? undefined;
    return values;
  }
  const record = headers as Readonly<Record<string, HeaderValue>>;
  let missing = 0;
  for (let i = 0; i < lowerNames.length; i++) {
    const value = record[lowerNames[i]!];
    values[i] = value;
    if (value === undefined) missing++;
  }
  if (missing === 0) return values;
  for (const key of Object.keys(record)) {
    const at = lowerNames.indexOf(key.toLowerCase());
    if (at !== -1 && values[at] === undefined) values[at] = record[key];
  }
  return values;
}

/** The first value of a header, for headers that must appear once. @internal */
export function firstValue(value: HeaderValue): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

/** The first value of a header, for headers that must appear once. @internal */
export function firstHeader(headers: RequestHeaders, name: string): string | undefined {
  return firstValue(readHeader(headers, name));
}

/** A `Content-Length` value as a number of bytes, when it reads as one. @internal */
export function contentLength(value: string | undefined): number | undefined {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * True for `application/json` and `application/*+json`, with any parameters, as long as a charset
 * parameter, if given, is UTF-8 (the signature is over UTF-8 bytes).
 * @internal
 */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  // What the service sends (spec §6.1), answered without splitting.
  if (value === 'application/json') return true;
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
