import { JobhookError } from '../errors.js';

/** Longest `jobId` a store accepts (the service's ids are 36-character UUIDs). */
export const MAX_JOB_ID_LENGTH = 200;

/** Longest fencing token a store will compare; a longer one cannot be current, so it answers false. */
export const MAX_TOKEN_LENGTH = 200;

/** A short, safe description of a bad value for an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 40 ? `a ${value.length}-character string` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** `ERR_OPTION_INVALID` with `where` (e.g. `createMemoryStore`, `redisStore.claim`) leading the message. */
export function optionError(where: string, message: string): JobhookError {
  return new JobhookError('ERR_OPTION_INVALID', `${where}: ${message}`);
}

/** Throws unless `jobId` is a non-empty string of at most {@link MAX_JOB_ID_LENGTH} characters. */
export function checkJobId(jobId: unknown, where: string): asserts jobId is string {
  if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > MAX_JOB_ID_LENGTH) {
    throw optionError(where, `jobId must be a non-empty string of at most ${MAX_JOB_ID_LENGTH} characters, got ${describeValue(jobId)}`);
  }
}

/** Throws unless `token` is a string (any string: a wrong one simply does not match). */
export function checkToken(token: unknown, where: string): asserts token is string {
  if (typeof token !== 'string') {
    throw optionError(where, `token must be the string claim() returned, got ${describeValue(token)}`);
  }
}

/**
 * Returns `value` when it is a whole number of milliseconds in `1..max`, else throws naming `name`.
 * Whole numbers because Redis's `PX`/`PEXPIRE` take integers; a fraction would be silently truncated.
 */
export function checkMs(value: unknown, name: string, where: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? 'a positive whole number of milliseconds' : `a whole number of milliseconds from 1 to ${max}`;
    throw optionError(where, `${name} must be ${range}, got ${describeValue(value)}`);
  }
  return value;
}

/** Reads `options[name]`, throwing a clear error when `options` is not an object at all. */
export function readOption(options: unknown, name: string, where: string): unknown {
  if (typeof options !== 'object' || options === null) {
    throw optionError(where, `options must be an object with \`${name}\`, got ${describeValue(options)}`);
  }
  return (options as Record<string, unknown>)[name];
}
