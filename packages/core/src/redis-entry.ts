/**
 * @jobhook/core/redis: the Redis idempotency store and the Redis job ledger, the two parts that
 * load ioredis, kept off the main entry so an app without Redis never loads it.
 * @packageDocumentation
 */
export * from './store/redis-store.js';
export { createRedisLedger, type RedisLedgerOptions } from './ledger/redis-ledger.js';
export { DEFAULT_REDIS_LEDGER_PREFIX } from './ledger/ledger-option-checks.js';
