import { checkFunction, checkInteger, MAX_TIMER_MS } from '@jobhook/core/internal';

/** Limits of `createMemoryJobStore`. */
export interface MemoryJobStoreOptions {
  /** Most jobs kept, unfinished ones included. Default 10000. */
  maxJobs?: number;
  /** Most bytes of jobs and delivery logs kept (estimated from their text). Default 256 MiB. */
  maxBytes?: number;
  /** A settled job (final, no delivery pending) is forgotten this long after it settled. 1 to 2^31-1; default 24 h. */
  settledTtlMs?: number;
  /** Clock of the TTL, in ms. Default `performance.now`. */
  now?: () => number;
}

/** Default `maxJobs` of the memory job store. */
export const DEFAULT_MAX_STORED_JOBS = 10_000;
/** Default `maxBytes` of the memory job store: 256 MiB. */
export const DEFAULT_MAX_STORED_JOB_BYTES = 256 * 1024 * 1024;
/** Default `settledTtlMs` of the memory job store: 24 h. */
export const DEFAULT_STORED_JOB_TTL_MS = 24 * 60 * 60 * 1000;

/** {@link MemoryJobStoreOptions} checked, with defaults. @internal */
export type ResolvedMemoryJobStoreOptions = Required<MemoryJobStoreOptions>;

const WHERE = 'createMemoryJobStore';

function limit(name: string, value: unknown, fallback: number, max: number): number {
  return value === undefined ? fallback : checkInteger(WHERE, name, value, { min: 1, max });
}

/**
 * Checks the limits of `createMemoryJobStore` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveMemoryJobStoreOptions(options: MemoryJobStoreOptions = {}): ResolvedMemoryJobStoreOptions {
  const maxJobs = limit('maxJobs', options.maxJobs, DEFAULT_MAX_STORED_JOBS, 10_000_000);
  const maxBytes = limit('maxBytes', options.maxBytes, DEFAULT_MAX_STORED_JOB_BYTES, Number.MAX_SAFE_INTEGER);
  // lru-cache keeps the TTL without a timer, but it is a time span like the others: bounded alike.
  const settledTtlMs = limit('settledTtlMs', options.settledTtlMs, DEFAULT_STORED_JOB_TTL_MS, MAX_TIMER_MS);
  const now = checkFunction<() => number>(WHERE, 'now', options.now ?? (() => performance.now()), 'a function returning ms');
  return { maxJobs, maxBytes, settledTtlMs, now };
}
