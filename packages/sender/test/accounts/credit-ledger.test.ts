// One CreditLedger contract, run against the memory ledger and the Redis ledger (a real redis-server
// started for this file); then what only Redis gives: several processes and restarts sharing balances.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../core/test/helpers/redis-server.js';
import { createMemoryCreditLedger, priceUnits, type CreditLedger, type LedgerAccount } from '../../src/accounts/credit-ledger.js';
import { createRedisCreditLedger } from '../../src/accounts/redis-credit-ledger.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.dispose();
});

const open: CreditLedger[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

const prefix = (): string => `ledger-test-${randomUUID().slice(0, 8)}:`;
const account = (cap: number | null): LedgerAccount => ({ ref: randomUUID(), cap });

const kinds: { name: string; make: (prefix: string) => Promise<CreditLedger> }[] = [
  { name: 'memory', make: async () => createMemoryCreditLedger() },
  { name: 'redis', make: (p) => createRedisCreditLedger({ redis: server.url, prefix: p }) },
];

describe.each(kinds)('CreditLedger conformance: $name', ({ make }) => {
  let ledger: CreditLedger;
  const start = async (): Promise<CreditLedger> => {
    ledger = await make(prefix());
    open.push(ledger);
    return ledger;
  };

  it('charges until the balance is below the price, then refuses naming price and balance; never below zero', async () => {
    await start();
    const a = account(1);
    const answers = [];
    for (let i = 0; i < 34; i++) answers.push(await ledger.charge(a, '0.03'));
    expect(answers.slice(0, 33).every((r) => r.ok)).toBe(true);
    expect(answers[33]).toEqual({ ok: false, detail: "insufficient credits: this request costs 0.03, the key's balance is 0.01" });
    expect(await ledger.read(a)).toEqual({ balance: 0.01, requests: 33, spent: 0.99 });
  });

  it('decimal amounts are exact: 1000 - 0.03 is 999.97, 0.1 + 0.2 spent is 0.3', async () => {
    await start();
    const a = account(1000);
    await ledger.charge(a, '0.03');
    expect((await ledger.read(a)).balance).toBe(999.97);
    const b = account(null);
    await ledger.charge(b, '0.1');
    await ledger.charge(b, '0.2');
    expect(await ledger.read(b)).toEqual({ balance: null, requests: 2, spent: 0.3 });
  });

  it('a refund gives the price back and uncounts the request', async () => {
    await start();
    const a = account(0.05);
    expect((await ledger.charge(a, '0.03')).ok).toBe(true);
    await ledger.refund(a, '0.03');
    expect(await ledger.read(a)).toEqual({ balance: 0.05, requests: 0, spent: 0 });
    expect((await ledger.charge(a, '0.05')).ok).toBe(true);
  });

  it('an untouched account reads its starting balance; uncapped accounts only count; a negative balance refuses at once', async () => {
    await start();
    expect(await ledger.read(account(12.5))).toEqual({ balance: 12.5, requests: 0, spent: 0 });
    const negative = account(-3);
    expect(await ledger.charge(negative, '0.01')).toEqual({
      ok: false,
      detail: "insufficient credits: this request costs 0.01, the key's balance is -3",
    });
    expect(await ledger.read(negative)).toEqual({ balance: -3, requests: 0, spent: 0 });
  });

  it('100 concurrent charges of 0.03 on a balance of 1: exactly 33 pass', async () => {
    await start();
    const a = account(1);
    const answers = await Promise.all(Array.from({ length: 100 }, () => ledger.charge(a, '0.03')));
    expect(answers.filter((r) => r.ok)).toHaveLength(33);
    expect(await ledger.read(a)).toEqual({ balance: 0.01, requests: 33, spent: 0.99 });
  });
});

describe('Redis ledger: shared by processes, kept across restarts', () => {
  it('two ledgers on one Redis (two sender processes) charge one balance: 100 concurrent charges split across them, exactly 33 pass', async () => {
    const p = prefix();
    const [one, two] = await Promise.all([
      createRedisCreditLedger({ redis: server.url, prefix: p }),
      createRedisCreditLedger({ redis: server.url, prefix: p }),
    ]);
    open.push(one, two);
    const a = account(1);
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? one : two).charge(a, '0.03')));
    expect(answers.filter((r) => r.ok)).toHaveLength(33);
    expect(await two.read(a)).toEqual(await one.read(a));
  });

  it('a restart goes on from the balance left; a new starting balance in the accounts file starts a new count', async () => {
    const p = prefix();
    const first = await createRedisCreditLedger({ redis: server.url, prefix: p });
    const a = account(0.05);
    await first.charge(a, '0.03');
    await first.close();
    const restarted = await createRedisCreditLedger({ redis: server.url, prefix: p });
    open.push(restarted);
    expect(await restarted.read(a)).toEqual({ balance: 0.02, requests: 1, spent: 0.03 });
    expect((await restarted.charge(a, '0.03')).ok).toBe(false);
    expect(await restarted.read({ ref: a.ref, cap: 10 })).toEqual({ balance: 10, requests: 0, spent: 0 });
  });

  it('Redis down: charges fail with ERR_STORE_UNAVAILABLE (the API answers 503), and work again once it is back', async () => {
    const own = await startRedisServer();
    try {
      const ledger = await createRedisCreditLedger({ redis: own.url, prefix: prefix() });
      open.push(ledger);
      const a = account(1);
      await own.stop();
      await expect(ledger.charge(a, '0.03')).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
      await own.restart();
      // Retried until Redis answers again, without a count of tries (never reconnecting fails at the test timeout).
      let answer: Awaited<ReturnType<CreditLedger['charge']>> | undefined;
      while (answer === undefined) {
        answer = await ledger.charge(a, '0.03').catch(async () => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          return undefined;
        });
      }
      expect(answer).toEqual({ ok: true });
    } finally {
      await own.dispose();
    }
  });

  it('options are checked: a redis that is neither a URL nor a client is ERR_OPTION_INVALID', async () => {
    await expect(createRedisCreditLedger({ redis: 42 as never })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
    await expect(createRedisCreditLedger({ redis: 'http://127.0.0.1:1' })).rejects.toMatchObject({ code: 'ERR_OPTION_INVALID' });
  });
});

describe('priceUnits', () => {
  it('reads decimal prices exactly and refuses anything else', () => {
    expect(priceUnits('0.03')).toBe(30_000_000);
    expect(priceUnits('0.002')).toBe(2_000_000);
    expect(priceUnits('12')).toBe(12_000_000_000);
    for (const bad of ['', '-1', '1e3', '0.0000000001', ' 1', 'NaN'])
      expect(() => priceUnits(bad)).toThrow(/price must be a decimal string/);
  });
});
