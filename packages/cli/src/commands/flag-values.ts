import type { Command } from '../command.js';
import { UsageError } from '../command.js';

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
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
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

/** The body styles of core's `signPayload`. */
export { BODY_STYLES } from '@jobhook/core/internal';
