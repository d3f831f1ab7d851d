import { randomUUID } from 'node:crypto';
import type { Clock } from '@jobhook/core';
import { checkFunction, checkMs, MAX_TIMER_MS } from '@jobhook/core/internal';
import type { JobLedger } from '@jobhook/core/ledger';
import { checkLedger } from './ledger-option.js';

/**
 * Default result deadline: a job submitted with a `webhook_receiver` and not handled within 10
 * minutes of its submission is polled. The service's webhook retries span a few minutes (spec §8:
 * at most 3 retries, backoff up to 30 s, 30 s per attempt), so by then every delivery has been tried.
 */
export const DEFAULT_RESULT_DEADLINE_MS = 600_000;

/** Options of `submitWithLedger`. */
export interface LedgerSubmitOptions {
  /** How long after the submission a job without a handled result is polled, ms. Default {@link DEFAULT_RESULT_DEADLINE_MS}. */
  resultDeadlineMs?: number;
  /**
   * The submission key the ledger entry is written under before the request. Default a random UUID.
   * Give your own when the submission carries one already (a recipient tag's nonce, an idempotency key).
   */
  key?: string;
  /** Where time comes from: `now()` in ms since the epoch. Default `Date`. */
  clock?: Clock;
}

/** The arguments of `submitWithLedger` checked, with defaults. @internal */
export interface ResolvedLedgerSubmit {
  ledger: JobLedger;
  resultDeadlineMs: number;
  /** The submission key: the one given, else a fresh UUID. */
  key: string;
  /** Now, in ms since the epoch, from `clock` (default `Date`). */
  now: number;
}

const WHERE = 'submitWithLedger';

/**
 * Checks the arguments of `submitWithLedger` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the argument.
 * @internal
 */
export function resolveLedgerSubmit(ledger: unknown, submit: unknown, options: LedgerSubmitOptions = {}): ResolvedLedgerSubmit {
  checkLedger(WHERE, ledger);
  checkFunction(WHERE, 'submit', submit);
  const resultDeadlineMs = checkMs(WHERE, 'resultDeadlineMs', options.resultDeadlineMs ?? DEFAULT_RESULT_DEADLINE_MS, {
    max: MAX_TIMER_MS,
  });
  return {
    ledger: ledger as JobLedger,
    resultDeadlineMs,
    key: options.key ?? randomUUID(),
    now: options.clock === undefined ? Date.now() : options.clock.now(),
  };
}
