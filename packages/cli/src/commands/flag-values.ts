import { isIP } from 'node:net';
import type { Command } from '../command.js';
import { UsageError } from '../command.js';

// The CLI's one home for reading flag values: each reader refuses a bad value with a UsageError
// naming the flag. Ranges of `serve`'s numbers are createSender's to check (its refusals come back
// naming the flag), so `serve` reads them with wholeNumberFlag.

/** The flag's text as a whole number, NaN when it is not one. */
function wholeNumber(value: string): number {
  return /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
}

/** Reads a whole-number flag whose range another layer checks. */
export function wholeNumberFlag(command: Command, flag: string, value: string): number {
  const n = wholeNumber(value);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} must be a whole number, got '${value}'`, command);
  return n;
}

/**
 * Reads a whole-number flag; a bad value is a command-line mistake naming the flag and its range.
 * @param value the flag's text, `undefined` when not given (then `fallback`).
 */
export function integerFlag(
  command: Command,
  flag: string,
  value: string | undefined,
  range: { min: number; max: number; fallback: number },
): number {
  if (value === undefined) return range.fallback;
  const n = wholeNumber(value);
  if (!(Number.isSafeInteger(n) && n >= range.min && n <= range.max)) {
    throw new UsageError(`${flag} must be a whole number from ${range.min} to ${range.max}, got '${value}'`, command);
  }
  return n;
}

/** Reads a flag whose value is one of `choices`. */
export function choiceFlag<const T extends string>(
  command: Command,
  flag: string,
  value: string | undefined,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got '${value}'`, command);
  }
  return value as T;
}

/** Reads an http(s) URL flag. */
export function urlFlag(command: Command, flag: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag} must be an http:// or https:// URL, got '${value}'`, command);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an http:// or https:// URL, got '${value}'`, command);
  }
  return url;
}

/** Reads a CIDR flag (`127.0.0.0/8`, `fd00::/8`). */
export function cidrFlag(command: Command, flag: string, cidr: string): string {
  const [address = '', prefix, extra] = cidr.split('/');
  const version = isIP(address);
  const bits = prefix !== undefined && /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
  if (version === 0 || extra !== undefined || !(bits >= 0 && bits <= (version === 4 ? 32 : 128))) {
    throw new UsageError(`${flag} must be a CIDR such as 127.0.0.0/8 or fd00::/8, got '${cidr}'`, command);
  }
  return cidr;
}

/** The body styles of core's `signPayload`. */
export { BODY_STYLES } from '@jobhook/core/internal';
