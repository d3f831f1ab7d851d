import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIsoInstant } from '../../src/events/iso-instant.js';

// The reference: the grammar as a regular expression, the date through Date (years set with
// setUTCFullYear, so 0050 is year 50, not 1950), a rolled-over field refused.
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
function reference(text: string): number | undefined {
  const m = ISO.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '', offset = 'Z'] = m as unknown as string[];
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  if (offset === 'Z' || offset === 'z') return date.getTime();
  const digits = offset.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return date.getTime() - (offset.startsWith('-') ? -1 : 1) * minutes * 60_000;
}

const two = (max: number) => fc.integer({ min: 0, max }).map((v) => String(v).padStart(2, '0'));
/** Timestamps near the grammar: valid ones, fields out of range, and each separator or part varied. */
const stamp = fc
  .tuple(
    fc.integer({ min: 0, max: 9999 }).map((v) => String(v).padStart(4, '0')),
    two(13),
    two(32),
    fc.constantFrom('T', ' ', 't', '_'),
    two(25),
    two(60),
    fc.option(two(61)),
    fc.option(fc.tuple(fc.constantFrom('.', ',', ':'), fc.stringMatching(/^[0-9]{0,11}$/))),
    fc.option(fc.constantFrom('Z', 'z', '+00:00', '-05:30', '+0530', '+05', '+5', '-12:', '+14:00', 'UTC', '+99:99')),
  )
  .map(([y, mo, d, t, h, mi, s, frac, off]) => {
    let text = `${y}-${mo}-${d}${t}${h}:${mi}`;
    if (s !== null) text += `:${s}${frac === null ? '' : frac[0] + frac[1]}`;
    return text + (off ?? '');
  });

describe('parseIsoInstant', () => {
  it('reads what Python isoformat() writes, UTC when no offset is given', () => {
    expect(parseIsoInstant('2026-11-27T18:04:05.123456+00:00')).toBe(Date.UTC(2026, 10, 27, 18, 4, 5, 123));
    expect(parseIsoInstant('2026-11-27 18:04:05')).toBe(Date.UTC(2026, 10, 27, 18, 4, 5));
    expect(parseIsoInstant('2026-11-27T18:04')).toBe(Date.UTC(2026, 10, 27, 18, 4));
    expect(parseIsoInstant('2026-11-27T18:04:05,9Z')).toBe(Date.UTC(2026, 10, 27, 18, 4, 5, 900));
    expect(parseIsoInstant('2026-11-27T18:04:05-05:30')).toBe(Date.UTC(2026, 10, 27, 23, 34, 5));
    expect(parseIsoInstant('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
  });

  it('refuses dates and times that do not exist, and what is not the grammar', () => {
    for (const text of [
      '2026-02-29T00:00:00Z',
      '2100-02-29T00:00',
      '2026-04-31T00:00',
      '2026-11-27T24:00',
      '2026-11-27T23:60',
      '2026-11-27T23:59:60',
      '2026-00-10T00:00',
      '2026-11-27T18:04:05.',
      '2026-11-27T18:04:05.1234567890',
      '2026-11-27T18:04:05+5',
      '2026-11-27',
      ' 2026-11-27T18:04',
      '2026-11-27T18:04Zz',
      '２０２６-11-27T18:04',
    ]) {
      expect(parseIsoInstant(text), text).toBeUndefined();
    }
  });

  it('agrees with the pattern-and-Date reference on 20,000 timestamps near the grammar', () => {
    fc.assert(
      fc.property(stamp, (text) => {
        expect(parseIsoInstant(text)).toBe(reference(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('agrees with the reference on any short string', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        expect(parseIsoInstant(text)).toBe(reference(text));
      }),
      { numRuns: 5_000 },
    );
  });
});
