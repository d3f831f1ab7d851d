/** Longest `Retry-After` honoured: an hour. A larger one is most likely a misconfiguration. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP date. Returns ms
 * from `nowMs`, clamped to 0–1 h; `undefined` when absent or unreadable.
 * @internal
 */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}
