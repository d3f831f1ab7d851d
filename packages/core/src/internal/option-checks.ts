import { JobhookError, type JobhookErrorOptions } from '../errors.js';

// One home for the option and argument checks every jobhook package makes, so that a wrong value
// is refused alike everywhere. Every check takes the caller's name first (`createSender`,
// `redisStore.claim`, `--redis`), then the option's name when it has one, then the value; the
// message reads `<caller>: <option> must be <what>, got <value>`.

/** Longest `jobId` a store or queue accepts (the service's ids are 36-character UUIDs). */
export const MAX_JOB_ID_LENGTH = 200;

/** Longest fencing token a store will compare; a longer one cannot be current, so it answers false. */
export const MAX_TOKEN_LENGTH = 200;

/** `setTimeout` fires at once beyond 2^31-1 ms, so longer waits are taken in steps (or refused). */
export const MAX_TIMER_MS = 2_147_483_647;

/** Bounds of a numeric check; both are inclusive. */
export interface Bounds {
  /** Smallest value allowed. */
  min?: number;
  /** Largest value allowed. */
  max?: number;
}

/**
 * A short, safe description of a bad value for an error message: a string quoted (or only its
 * length when it is long, so a pasted secret is not repeated), a number as written, else its kind.
 *
 * @example
 * ```ts
 * describeValue('abc') // '"abc"'
 * describeValue({}) // 'an object'
 * ```
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 40 ? `a ${value.length}-character string` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * `ERR_OPTION_INVALID` with the caller's name leading the message.
 *
 * @example
 * ```ts
 * throw optionError('createSender', 'give apiKeys or accounts, not both');
 * ```
 */
export function optionError(where: string, message: string, options?: JobhookErrorOptions): JobhookError {
  return new JobhookError('ERR_OPTION_INVALID', `${where}: ${message}`, options);
}

/** Throws unless `value` is an object (not null); `what` describes the object expected. */
export function checkObject(where: string, name: string, value: unknown, what = 'an object'): asserts value is object {
  if (typeof value !== 'object' || value === null) throw optionError(where, `${name} must be ${what}, got ${describeValue(value)}`);
}

/** Reads `options[name]`, throwing a clear error when `options` is not an object at all. */
export function readOption(where: string, options: unknown, name: string): unknown {
  if (typeof options !== 'object' || options === null) {
    throw optionError(where, `options must be an object with \`${name}\`, got ${describeValue(options)}`);
  }
  return (options as Record<string, unknown>)[name];
}

/** Returns `jobId` when it is a non-empty string of at most {@link MAX_JOB_ID_LENGTH} characters, else throws. */
export function checkJobId(where: string, jobId: unknown): string {
  if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > MAX_JOB_ID_LENGTH) {
    throw optionError(where, `jobId must be a non-empty string of at most ${MAX_JOB_ID_LENGTH} characters, got ${describeValue(jobId)}`);
  }
  return jobId;
}

/**
 * Returns `nonce` when it is a non-empty string of at most {@link MAX_JOB_ID_LENGTH} characters
 * (a recipient tag's nonce is 22), else throws: the argument check of `bindTagNonce`.
 */
export function checkTagNonce(where: string, nonce: unknown): string {
  if (typeof nonce !== 'string' || nonce.length === 0 || nonce.length > MAX_JOB_ID_LENGTH) {
    throw optionError(where, `nonce must be a non-empty string of at most ${MAX_JOB_ID_LENGTH} characters, got ${describeValue(nonce)}`);
  }
  return nonce;
}

/** Returns `token` when it is a string (any string: a wrong one simply does not match), else throws. */
export function checkToken(where: string, token: unknown): string {
  if (typeof token !== 'string') throw optionError(where, `token must be the string claim() returned, got ${describeValue(token)}`);
  return token;
}

function range(kind: string, min: number, max: number): string {
  if (max === Number.MAX_SAFE_INTEGER) {
    if (min === 1) return `a positive ${kind}`;
    return min === 0 ? `a non-negative ${kind}` : `${withArticle(kind)} >= ${min}`;
  }
  return `${withArticle(kind)} from ${min} to ${max}`;
}

function withArticle(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/**
 * Returns `value` when it is a safe integer in `min..max` (default: any), else throws naming `name`.
 *
 * @example
 * ```ts
 * checkInteger('createRetryPolicy', 'maxRetries', 3, { min: 0, max: 100 }) // 3
 * ```
 */
export function checkInteger(where: string, name: string, value: unknown, bounds: Bounds = {}): number {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = bounds;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw optionError(where, `${name} must be ${range('integer', min, max)}, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Returns `value` when it is a whole number of milliseconds in `min..max` (defaults 1 and
 * `Number.MAX_SAFE_INTEGER`; pass `max: MAX_TIMER_MS` for anything that becomes a timer), else
 * throws naming `name`. Whole numbers because Redis's `PX`/`PEXPIRE` take integers; a fraction
 * would be silently truncated.
 *
 * @example
 * ```ts
 * checkMs('createRedisStore', 'operationTimeoutMs', 2000, { max: MAX_TIMER_MS }) // 2000
 * ```
 */
export function checkMs(where: string, name: string, value: unknown, bounds: Bounds = {}): number {
  const { min = 1, max = Number.MAX_SAFE_INTEGER } = bounds;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw optionError(where, `${name} must be ${range('whole number of milliseconds', min, max)}, got ${describeValue(value)}`);
  }
  return value;
}

/** Returns `value` when it is a finite number in `min..max` (fractions allowed), else throws naming `name`. */
export function checkNumber(where: string, name: string, value: unknown, bounds: Bounds = {}): number {
  const { min = -Number.MAX_VALUE, max = Number.MAX_VALUE } = bounds;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    const what = max === Number.MAX_VALUE ? `a finite number >= ${min}` : `a finite number from ${min} to ${max}`;
    throw optionError(where, `${name} must be ${min === -Number.MAX_VALUE ? 'a finite number' : what}, got ${describeValue(value)}`);
  }
  return value;
}

/** Returns `value` when it is a boolean, else throws naming `name`. */
export function checkBoolean(where: string, name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw optionError(where, `${name} must be a boolean, got ${describeValue(value)}`);
  return value;
}

/** Returns `value` when it is a function, else throws naming `name`; `what` describes the function expected. */
export function checkFunction<F extends (...args: never[]) => unknown>(
  where: string,
  name: string,
  value: unknown,
  what = 'a function',
): F {
  if (typeof value !== 'function') throw optionError(where, `${name} must be ${what}, got ${describeValue(value)}`);
  return value as F;
}

/**
 * Returns `value` when it is one of `allowed`, else throws naming `name` and listing them, so a
 * typo is refused rather than silently taken as the default.
 *
 * @example
 * ```ts
 * checkOneOf('createReceiver', 'bigIntegers', 'bigint', ['string', 'bigint'] as const) // 'bigint'
 * ```
 */
export function checkOneOf<T extends string>(where: string, name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw optionError(where, `${name} must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describeValue(value)}`);
  }
  return value as T;
}

/**
 * Returns `value` when it is an object (or a function) with every one of `methods`, else throws naming `name`;
 * `what` describes the object expected (`a JobLedger`, `pino-compatible`).
 */
export function checkMethods<T extends object>(where: string, name: string, value: unknown, methods: readonly string[], what: string): T {
  const object = value as Record<string, unknown> | null | undefined;
  // A function with the methods counts too: `Date` is a clock (`Date.now()`).
  const holder = (typeof value === 'object' && value !== null) || typeof value === 'function';
  const missing = holder ? methods.filter((m) => typeof object?.[m] !== 'function') : methods;
  if (missing.length > 0) {
    throw optionError(where, `${name} must have ${listMethods(methods)} (${what}), got ${describeValue(value)}`);
  }
  return value as T;
}

function listMethods(methods: readonly string[]): string {
  if (methods.length === 1) return `a ${methods[0]} method`;
  return `${methods.slice(0, -1).join(', ')} and ${methods.at(-1)} methods`;
}

/** The parsed URL when `value` is a `redis://` or `rediss://` URL, else `undefined`. */
export function parseRedisUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'redis:' || parsed.protocol === 'rediss:' ? parsed : undefined;
}

/** `url` with its password replaced by `***`, for messages and logs; `<unparsable URL>` when it is not a URL. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparsable URL>';
  }
}

/**
 * Returns the parsed URL when `value` is a `redis://` or `rediss://` URL, else throws naming
 * `name` (default `redis`). The message shows the value with its password redacted. `orClient`
 * says that an ioredis client is accepted too (the check is then only for strings).
 *
 * @example
 * ```ts
 * checkRedisUrl('createBullmqWorkQueue', 'connection', 'redis://127.0.0.1:6379/0') // URL
 * ```
 */
export function checkRedisUrl(where: string, name: string, value: unknown, options: { orClient?: boolean } = {}): URL {
  const parsed = parseRedisUrl(value);
  if (parsed === undefined) {
    const shown = typeof value === 'string' ? JSON.stringify(redactUrl(value)) : describeValue(value);
    const what = options.orClient === true ? 'a redis:// or rediss:// URL or an ioredis client' : 'a redis:// or rediss:// URL';
    throw optionError(where, `${name} must be ${what}, got ${shown}`);
  }
  return parsed;
}
