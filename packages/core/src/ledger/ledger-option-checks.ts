import type { Clock } from '../store/idempotency-store.js';
import {
  checkInteger,
  checkJobId,
  checkMethods,
  checkMs,
  checkObject,
  checkToken,
  describeValue,
  optionError,
  readOption,
} from '../internal/option-checks.js';
import { resolveRedisOptions, type ResolvedRedisOptions } from '../internal/redis-option-checks.js';

// Every option of the ledger factories (createMemoryLedger, createRedisLedger; createPostgresLedger
// through @jobhook/core/internal) and every argument of a ledger's methods is checked here, so each
// ledger accepts exactly the same calls and refuses a mistake in the same words. The options types
// stay with their factories: RedisLedgerOptions names ioredis's types, which must not reach the
// declarations of the main entry (ioredis is an optional peer dependency).

/** Most entries one `lease` call may take. */
export const MAX_LEASE_LIMIT = 10_000;

/** Longest submission key (a UUID is 36 characters). */
export const MAX_LEDGER_KEY_LENGTH = 200;

/** Default of `RedisLedgerOptions.keyPrefix`. */
export const DEFAULT_REDIS_LEDGER_PREFIX = 'jobhook:';

/** Throws unless `key` is a non-empty string of at most {@link MAX_LEDGER_KEY_LENGTH} characters. @internal */
export function checkLedgerKey(where: string, key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_LEDGER_KEY_LENGTH) {
    throw optionError(where, `key must be a non-empty string of at most ${MAX_LEDGER_KEY_LENGTH} characters, got ${describeValue(key)}`);
  }
}

/** Throws unless `value` is a time in ms since the epoch (a non-negative whole number). @internal */
export function checkEpochMs(where: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw optionError(where, `${name} must be a time in ms since the epoch (a whole number), got ${describeValue(value)}`);
  }
  return value;
}

/** Checks `lease` options. @internal */
export function checkLeaseOptions(where: string, options: unknown): { limit: number; leaseMs: number } {
  checkObject(where, 'options', options, 'an object with limit and leaseMs');
  const { limit, leaseMs } = options as { limit?: unknown; leaseMs?: unknown };
  return { limit: checkInteger(where, 'limit', limit, { min: 1, max: MAX_LEASE_LIMIT }), leaseMs: checkMs(where, 'leaseMs', leaseMs) };
}

/** What each `JobLedger` method checks of its arguments, from {@link ledgerArgs}. @internal */
export interface LedgerArgs {
  /** Checks `begin(key, { dueAt })`; returns `dueAt`. */
  begin(key: unknown, options: { dueAt?: unknown } | undefined): number;
  /** Checks `attach(key, jobId, { dueAt? })`; returns `dueAt`, `undefined` when not given. */
  attach(key: unknown, jobId: unknown, options: { dueAt?: unknown }): number | undefined;
  discard(key: unknown): void;
  settle(jobId: unknown): void;
  lease(options: unknown): { limit: number; leaseMs: number };
  /** Checks `reschedule(key, token, { dueAt })`; returns `dueAt`. */
  reschedule(key: unknown, token: unknown, options: { dueAt?: unknown } | undefined): number;
  abandon(key: unknown, token: unknown): void;
}

/**
 * The argument checks of every ledger, so each implementation accepts exactly the same calls;
 * errors name `${name}.<method>`. @internal
 * @example const args = ledgerArgs('memoryLedger'); const dueAt = args.begin(key, options);
 */
export function ledgerArgs(name: string): LedgerArgs {
  return Object.freeze({
    begin(key: unknown, options: { dueAt?: unknown } | undefined): number {
      checkLedgerKey(`${name}.begin`, key);
      return checkEpochMs(`${name}.begin`, 'dueAt', options?.dueAt);
    },
    attach(key: unknown, jobId: unknown, options: { dueAt?: unknown }): number | undefined {
      checkLedgerKey(`${name}.attach`, key);
      checkJobId(`${name}.attach`, jobId);
      return options.dueAt === undefined ? undefined : checkEpochMs(`${name}.attach`, 'dueAt', options.dueAt);
    },
    discard(key: unknown): void {
      checkLedgerKey(`${name}.discard`, key);
    },
    settle(jobId: unknown): void {
      checkJobId(`${name}.settle`, jobId);
    },
    lease: (options: unknown) => checkLeaseOptions(`${name}.lease`, options),
    reschedule(key: unknown, token: unknown, options: { dueAt?: unknown } | undefined): number {
      checkLedgerKey(`${name}.reschedule`, key);
      checkToken(`${name}.reschedule`, token);
      return checkEpochMs(`${name}.reschedule`, 'dueAt', options?.dueAt);
    },
    abandon(key: unknown, token: unknown): void {
      checkLedgerKey(`${name}.abandon`, key);
      checkToken(`${name}.abandon`, token);
    },
  });
}

/** The `now` of a ledger's `clock` option (ms since the epoch), `Date.now()` by default. @internal */
export function ledgerClock(where: string, clock: Clock | undefined): () => number {
  if (clock === undefined) return Date.now;
  const checked = checkMethods<Clock>(where, 'clock', clock, ['now'], 'returning ms since the epoch');
  return () => checked.now();
}

/**
 * Checks `createMemoryLedger`'s options; answers its clock.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveMemoryLedgerOptions(options: unknown): { now: () => number } {
  const where = 'createMemoryLedger';
  checkObject(where, 'options', options);
  return { now: ledgerClock(where, (options as { clock?: Clock }).clock) };
}

/** `RedisLedgerOptions` checked and filled in; `redis` is checked when the client is made from it. @internal */
export interface ResolvedRedisLedgerOptions extends ResolvedRedisOptions {
  readonly now: () => number;
}

/**
 * Checks `createRedisLedger`'s options and fills in the defaults: the Redis options as the Redis
 * store checks them (one check for both), and the clock.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveRedisLedgerOptions(options: unknown): ResolvedRedisLedgerOptions {
  const where = 'createRedisLedger';
  const resolved = resolveRedisOptions(where, options, DEFAULT_REDIS_LEDGER_PREFIX);
  return { ...resolved, now: ledgerClock(where, readOption(where, options, 'clock') as Clock | undefined) };
}
