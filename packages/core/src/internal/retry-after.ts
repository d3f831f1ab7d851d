/**
 * Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`). Returns milliseconds from `nowMs` (0 for a date in the past),
 * or `null` when absent or unreadable: a garbled header is ignored rather than trusted. Callers
 * apply their own ceiling (the delivery engine its 30 s backoff cap, the client one hour).
 *
 * @example
 * ```ts
 * parseRetryAfter('2', Date.now()) // 2000
 * ```
 */
export function parseRetryAfter(value: string | readonly string[] | undefined, nowMs: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return null;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : null;
  }
  // Only the date forms: Date.parse alone would also take "1.5" or "2024" as dates.
  if (!/[a-z]/i.test(text) || !/\d{1,2}:\d{2}:\d{2}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
