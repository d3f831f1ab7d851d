import { optionError } from '@jobhook/core/internal';

/**
 * Credits are counted in integer nano-credits (10^-9): prices like `0.03` and balances like `999.97`
 * are then exact, and sums never show binary-float noise. Balances are below 10^5 (spec §2.1), so
 * every amount is below 10^14, a safe integer in JavaScript and a 64-bit integer in Redis.
 */
export const UNITS_PER_CREDIT = 1_000_000_000;

/** One key's account in a {@link CreditLedger}. */
export interface LedgerAccount {
  /** Stable name of the key across restarts and processes (its id, or a hash of a legacy key's token). */
  readonly ref: string;
  /** Starting balance when charges are capped (`active_balance` and a number balance); null: counted only. */
  readonly cap: number | null;
}

/** Balance and usage of one key. */
export interface LedgerEntry {
  /** Current balance; null for a key without a cap. */
  balance: number | null;
  /** Charged requests (refunded ones not counted). */
  requests: number;
  /** Credits charged, summed. */
  spent: number;
}

/** Result of {@link CreditLedger.charge}. */
export type ChargeResult = { ok: true } | { ok: false; detail: string };

/**
 * Where balances and usage live: this process's memory, or Redis so that several sender processes
 * (and restarts) share them.
 */
export interface CreditLedger {
  /**
   * Takes `price` (a decimal string such as `'0.03'`) from the account's balance when capped, refusing
   * when the balance is below the price; counts the request either way. Atomic: concurrent charges
   * never take a balance below zero nor lose one another.
   */
  charge(account: LedgerAccount, price: string): Promise<ChargeResult>;
  /** Gives back a charge whose request then failed on the service's side. */
  refund(account: LedgerAccount, price: string): Promise<void>;
  /** The account's balance and usage. */
  read(account: LedgerAccount): Promise<LedgerEntry>;
  close(): Promise<void>;
}

/** `'0.03'` → 30,000,000 units. Prices are the service's own constants: a malformed one is a bug. @internal */
export function priceUnits(price: string): number {
  const match = /^(\d{1,6})(?:\.(\d{1,9}))?$/.exec(price);
  if (match === null)
    throw optionError('credit ledger', `price must be a decimal string with at most 9 decimals, got ${JSON.stringify(price)}`);
  return Number(match[1]) * UNITS_PER_CREDIT + Number((match[2] ?? '').padEnd(9, '0'));
}

/** A configured balance (a number) in units, rounded to the nearest nano-credit. @internal */
export function balanceUnits(balance: number): number {
  return Math.round(balance * UNITS_PER_CREDIT);
}

/** Units back to credits: exact integers divided once, so `999970000000` shows as `999.97`. @internal */
export function toCredits(units: number): number {
  return units / UNITS_PER_CREDIT;
}

/** The refusal of a charge above the balance. @internal */
export function insufficient(price: string, balanceUnitsLeft: number): ChargeResult {
  return { ok: false, detail: `insufficient credits: this request costs ${price}, the key's balance is ${toCredits(balanceUnitsLeft)}` };
}

/** The default ledger: balances and usage in this process's memory, lost on restart. */
export function createMemoryCreditLedger(): CreditLedger {
  const entries = new Map<string, { balance: number | null; requests: number; spent: number }>();
  const entryOf = (account: LedgerAccount) => {
    let entry = entries.get(account.ref);
    if (entry === undefined) {
      entry = { balance: account.cap === null ? null : balanceUnits(account.cap), requests: 0, spent: 0 };
      entries.set(account.ref, entry);
    }
    return entry;
  };
  return {
    // Each method reads and writes without an await in between: atomic in this process.
    async charge(account, price) {
      const units = priceUnits(price);
      const entry = entryOf(account);
      if (entry.balance !== null) {
        if (entry.balance < units) return insufficient(price, entry.balance);
        entry.balance -= units;
      }
      entry.requests += 1;
      entry.spent += units;
      return { ok: true };
    },
    async refund(account, price) {
      const units = priceUnits(price);
      const entry = entryOf(account);
      if (entry.balance !== null) entry.balance += units;
      entry.requests -= 1;
      entry.spent -= units;
    },
    async read(account) {
      const entry = entryOf(account);
      return { balance: entry.balance === null ? null : toCredits(entry.balance), requests: entry.requests, spent: toCredits(entry.spent) };
    },
    async close() {},
  };
}
