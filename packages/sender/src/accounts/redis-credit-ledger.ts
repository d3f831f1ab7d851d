import { DEFAULT_CONNECT_TIMEOUT_MS, quitRedisClient, redisCall, redisFromOption } from '@jobhook/core/internal/redis';
import { resolveRedisCreditLedgerOptions, type RedisCreditLedgerOptions } from '../options/redis-credit-ledger-options.js';
import { balanceUnits, insufficient, priceUnits, toCredits, type CreditLedger, type LedgerAccount } from './credit-ledger.js';

export type { RedisCreditLedgerOptions } from '../options/redis-credit-ledger-options.js';

/**
 * `KEYS[1]` = the account hash, `ARGV[1]` = price units, `ARGV[2]` = the same negated, `ARGV[3]` =
 * starting balance units or `''` when uncapped. Amounts stay strings end to end: a Lua number
 * written back could come out as `1e+14`, which HINCRBY refuses. Returns `{1}` when charged,
 * `{0, balance}` when the balance is below the price.
 */
const CHARGE_LUA = `
if ARGV[3] ~= '' then
  redis.call('HSETNX', KEYS[1], 'balance', ARGV[3])
  local balance = redis.call('HGET', KEYS[1], 'balance')
  if tonumber(balance) < tonumber(ARGV[1]) then return {0, balance} end
  redis.call('HINCRBY', KEYS[1], 'balance', ARGV[2])
end
redis.call('HINCRBY', KEYS[1], 'requests', 1)
redis.call('HINCRBY', KEYS[1], 'spent', ARGV[1])
return {1}
`;

/** Same arguments as the charge: gives the price back and uncounts the request. */
const REFUND_LUA = `
if ARGV[3] ~= '' then
  redis.call('HSETNX', KEYS[1], 'balance', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'balance', ARGV[1])
end
redis.call('HINCRBY', KEYS[1], 'requests', -1)
redis.call('HINCRBY', KEYS[1], 'spent', ARGV[2])
return 1
`;

interface LedgerClient {
  jobhookCreditChargeV1(key: string, units: string, negated: string, start: string): Promise<[number, string?]>;
  jobhookCreditRefundV1(key: string, units: string, negated: string, start: string): Promise<number>;
}

/**
 * Balances and usage in Redis, shared by every sender process on it and kept across restarts: one
 * hash per key at `${prefix}credits:${ref}:${startingBalance}` (fields `balance`, `requests`,
 * `spent`, in nano-credits), charged and refunded by one Lua script each, so concurrent charges on
 * several processes never overdraw a balance. The starting balance is part of the name, so a new
 * balance in the accounts file starts a new count, while a restart with the same file goes on from
 * where the last one stopped. No TTL: an account is a few bytes.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` for a bad option; `ERR_STORE_UNAVAILABLE` when the URL's
 * Redis cannot be reached, and from methods when Redis fails (the API answers 503).
 */
export async function createRedisCreditLedger(options: RedisCreditLedgerOptions): Promise<CreditLedger> {
  const { redis, prefix } = resolveRedisCreditLedgerOptions(options);
  const { client, owned } = await redisFromOption('createRedisCreditLedger', redis);
  client.defineCommand('jobhookCreditChargeV1', { numberOfKeys: 1, lua: CHARGE_LUA });
  client.defineCommand('jobhookCreditRefundV1', { numberOfKeys: 1, lua: REFUND_LUA });
  const scripts = client as unknown as LedgerClient;
  let closed = false;

  const start = (account: LedgerAccount): string => (account.cap === null ? '' : String(balanceUnits(account.cap)));
  const keyOf = (account: LedgerAccount): string => `${prefix}credits:${account.ref}:${account.cap === null ? 'uncapped' : start(account)}`;

  const call = <T>(operation: string, send: () => Promise<T>): Promise<T> => redisCall(`redisCreditLedger.${operation}`, closed, send);

  return {
    async charge(account, price) {
      const units = priceUnits(price);
      const [charged, balance] = await call('charge', () =>
        scripts.jobhookCreditChargeV1(keyOf(account), String(units), String(-units), start(account)),
      );
      return charged === 1 ? { ok: true } : insufficient(price, Number(balance));
    },
    async refund(account, price) {
      const units = priceUnits(price);
      await call('refund', () => scripts.jobhookCreditRefundV1(keyOf(account), String(units), String(-units), start(account)));
    },
    async read(account) {
      const [balance, requests, spent] = await call('read', () => client.hmget(keyOf(account), 'balance', 'requests', 'spent'));
      return {
        balance: account.cap === null ? null : toCredits(balance === null ? balanceUnits(account.cap) : Number(balance)),
        requests: Number(requests ?? 0),
        spent: toCredits(Number(spent ?? 0)),
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (owned) await quitRedisClient(client, DEFAULT_CONNECT_TIMEOUT_MS);
    },
  };
}
