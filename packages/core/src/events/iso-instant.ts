// ISO 8601 as Python's isoformat() writes it (date, 'T' or ' ', time, optional fraction, optional offset).
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * The instant an ISO 8601 timestamp names, in ms since the epoch; a timestamp without an offset is
 * UTC (the service writes UTC; `Date.parse` would read it as the receiver's local time).
 * `undefined` when it is not such a timestamp or names no real date.
 * @internal
 */
export function parseIsoInstant(text: string): number | undefined {
  const m = ISO_INSTANT.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '', offset = 'Z'] = m as unknown as string[];
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const utc = Date.UTC(...fields, ms);
  const check = new Date(utc);
  // Date.UTC rolls 2026-02-30 over to March: a field out of range is a malformed timestamp.
  if (check.getUTCMonth() !== fields[1] || check.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) {
    return undefined;
  }
  if (offset === 'Z' || offset === 'z') return utc;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return utc - sign * offsetMinutes * 60_000;
}
