const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * The instant of an RFC 3339 date-time (ISO 8601 with a time zone: `2026-01-31T12:00:00Z`,
 * `2026-01-31T13:00:00.5+01:00`) in ms since the epoch, or undefined when `text` is not one or names
 * a day that does not exist (`2026-02-30`). A time zone is required: without one the instant is ambiguous.
 */
export function parseDateTime(text: string): number | undefined {
  const m = DATE_TIME.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  const ms = Date.parse(text.toUpperCase());
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * An instant as the service writes it: ISO 8601 with milliseconds and an explicit `+00:00` offset
 * (what Python's `datetime.isoformat()` gives for an aware UTC datetime), e.g. `2026-11-22T04:30:00.123+00:00`.
 */
export function formatInstant(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}
