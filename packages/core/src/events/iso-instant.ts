// ISO 8601 as Python's isoformat() writes it: YYYY-MM-DD, 'T' or ' ', HH:MM, optional :SS with an
// optional fraction of 1 to 9 digits ('.' or ','), optional offset (Z, z, ±HH, ±HHMM or ±HH:MM).
// Read by position rather than by a regular expression and Date: every delivery's finished_at goes
// through here, and this costs a fifth of what the pattern, its groups and a Date did.

/**
 * The instant an ISO 8601 timestamp names, in ms since the epoch; a timestamp without an offset is
 * UTC (the service writes UTC; `Date.parse` would read it as the receiver's local time).
 * `undefined` when it is not such a timestamp or names no real date (2026-02-30, 24:00).
 * @internal
 */
export function parseIsoInstant(text: string): number | undefined {
  const n = text.length;
  // 16: YYYY-MM-DDTHH:MM; 35: with :SS.fffffffff+HH:MM.
  if (n < 16 || n > 35) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const t = text.charCodeAt(10);
  if (
    year < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    text.charCodeAt(4) !== 0x2d ||
    text.charCodeAt(7) !== 0x2d ||
    (t !== 0x54 && t !== 0x20) ||
    text.charCodeAt(13) !== 0x3a
  ) {
    return undefined;
  }
  let p = 16;
  let second = 0;
  let ms = 0;
  if (text.charCodeAt(p) === 0x3a) {
    second = digits(text, p + 1, 2);
    if (second < 0 || second > 59) return undefined;
    p += 3;
    const c = text.charCodeAt(p);
    if (c === 0x2e || c === 0x2c) {
      const start = ++p;
      while (p < n && isDigit(text.charCodeAt(p))) p++;
      const count = p - start;
      if (count === 0 || count > 9) return undefined;
      // Milliseconds: the first three digits, the rest truncated.
      for (let i = 0; i < 3; i++) ms = ms * 10 + (i < count ? text.charCodeAt(start + i) - 0x30 : 0);
    }
  }
  const utc = (daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1000 + ms;
  if (p === n) return utc;
  const sign = text.charCodeAt(p);
  if ((sign === 0x5a || sign === 0x7a) && p + 1 === n) return utc;
  if (sign !== 0x2b && sign !== 0x2d) return undefined;
  const offsetHours = digits(text, p + 1, 2);
  if (offsetHours < 0) return undefined;
  p += 3;
  let offsetMinutes = 0;
  if (p < n) {
    if (text.charCodeAt(p) === 0x3a) p++;
    offsetMinutes = digits(text, p, 2);
    if (offsetMinutes < 0 || p + 2 !== n) return undefined;
  }
  return utc - (sign === 0x2d ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The number written by `count` ASCII digits at `at`, or -1. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const c = text.charCodeAt(i);
    if (!isDigit(c)) return -1;
    value = value * 10 + (c - 0x30);
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}
