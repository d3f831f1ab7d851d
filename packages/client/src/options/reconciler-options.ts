import type { Clock, Logger, Receiver } from '@jobhook/core';
import {
  checkFunction,
  checkInteger,
  checkMethods,
  checkMs,
  checkObject,
  MAX_TIMER_MS,
  optionError,
  resolveLogger,
} from '@jobhook/core/internal';
import type { JobLedger, LedgerCounts, ReconcileOutcome } from '@jobhook/core/ledger';
import type { Client } from '../create-client.js';
import { checkLedger } from './ledger-option.js';

/** Default of {@link ReconcilerOptions.intervalMs}. */
export const DEFAULT_RECONCILE_INTERVAL_MS = 5_000;
/** Default of {@link ReconcilerOptions.batchSize}. */
export const DEFAULT_RECONCILE_BATCH = 50;
/** Default of {@link ReconcilerOptions.maxPollsPerSecond}. */
export const DEFAULT_MAX_POLLS_PER_SECOND = 5;
/** Default of {@link ReconcilerOptions.pollBackoffMs}. */
export const DEFAULT_POLL_BACKOFF_MS = 30_000;
/** Default of {@link ReconcilerOptions.maxPollBackoffMs}: 15 minutes. */
export const DEFAULT_MAX_POLL_BACKOFF_MS = 900_000;
/** Default of {@link ReconcilerOptions.horizonMs}: a day after submission. */
export const DEFAULT_RECONCILE_HORIZON_MS = 86_400_000;
/** Default of {@link ReconcilerOptions.unattachedGraceMs}: 10 minutes. */
export const DEFAULT_UNATTACHED_GRACE_MS = 600_000;

/** Options of `createReconciler`. */
export interface ReconcilerOptions {
  /** Polls the service: a client from `createClient` (its `getJob`, with the API key). Required. */
  client: Pick<Client, 'getJob'>;
  /** The expected-jobs ledger the client writes. Required. */
  ledger: JobLedger;
  /** The receiver whose handlers and idempotency store finished jobs go through (`handlePolled`). Required. */
  receiver: Pick<Receiver, 'handlePolled'>;
  /** Pause between two rounds when the last one found fewer due entries than `batchSize`, ms. Default 5,000. */
  intervalMs?: number;
  /** Entries leased per round. Default 50. */
  batchSize?: number;
  /**
   * How long a round holds its entries (no other instance polls them meanwhile), ms. Default:
   * twice the time a full batch takes at `maxPollsPerSecond`, plus a minute for the handlers.
   */
  leaseMs?: number;
  /** The reconciler's own rate limit on polls (per instance). Default 5. */
  maxPollsPerSecond?: number;
  /** Concurrent polls (and polled handlers) at most. Default 4. */
  concurrency?: number;
  /** Wait before polling again a job that is not finished (or a failed poll): doubled per attempt, ms. Default 30,000. */
  pollBackoffMs?: number;
  /** Longest such wait, ms. Default 900,000 (15 minutes). */
  maxPollBackoffMs?: number;
  /**
   * A job still unfinished this long after its submission is abandoned (a log line, a metric), ms.
   * Default 86,400,000 (a day: the reference service forgets a finished job a day after it
   * finished). Keep it under the receiver's `doneTtlMs`: a poll after the done mark expired could
   * run the handler of a job its webhook handled.
   */
  horizonMs?: number;
  /**
   * An entry that got no job id this long after its submission is abandoned, ms. Default 600,000.
   * Keep it above the client's request timeout (a submission may still be answering).
   */
  unattachedGraceMs?: number;
  /** pino-compatible logger. Default: JSON lines at `warn` on stderr. */
  logger?: Logger;
  /** Called with each entry's outcome. Errors it throws are logged. */
  onOutcome?: (outcome: ReconcileOutcome) => void;
  /** Metrics (`createReconcilerMetrics` from `@jobhook/core/metrics`). */
  metrics?: { observe(outcome: ReconcileOutcome): void; outstanding(counts: LedgerCounts): void };
  /** Where time comes from: `now()` in ms since the epoch. Default `Date`. Timers are the global ones (fake them in tests). */
  clock?: Clock;
}

/** {@link ReconcilerOptions} checked, with defaults: every option set but the two hooks. @internal */
export interface ResolvedReconcilerOptions extends Required<Omit<ReconcilerOptions, 'onOutcome' | 'metrics'>> {
  onOutcome: ReconcilerOptions['onOutcome'];
  metrics: ReconcilerOptions['metrics'];
}

const WHERE = 'createReconciler';

function fail(message: string): never {
  throw optionError(WHERE, message);
}

function positive(name: string, value: unknown, max: number): number {
  return checkInteger(WHERE, name, value, { min: 1, max });
}

/**
 * Checks every option of `createReconciler` and applies the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveReconcilerOptions(options: ReconcilerOptions): ResolvedReconcilerOptions {
  checkObject(WHERE, 'options', options);
  const { client, ledger, receiver, onOutcome, metrics } = options;
  checkMethods(WHERE, 'client', client, ['getJob'], 'required: createClient(...)');
  checkLedger(WHERE, ledger);
  checkMethods(WHERE, 'receiver', receiver, ['handlePolled'], 'a receiver from createReceiver');
  if (onOutcome !== undefined) checkFunction(WHERE, 'onOutcome', onOutcome);
  if (metrics !== undefined) checkMethods(WHERE, 'metrics', metrics, ['observe', 'outstanding'], 'createReconcilerMetrics');
  const intervalMs = options.intervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
  checkMs(WHERE, 'intervalMs', intervalMs, { max: MAX_TIMER_MS });
  const batchSize = positive('batchSize', options.batchSize ?? DEFAULT_RECONCILE_BATCH, 10_000);
  const perSecond = positive('maxPollsPerSecond', options.maxPollsPerSecond ?? DEFAULT_MAX_POLLS_PER_SECOND, 10_000);
  const concurrency = positive('concurrency', options.concurrency ?? 4, 256);
  const batchMs = Math.ceil((batchSize * 1000) / perSecond);
  const leaseMs = options.leaseMs ?? 2 * batchMs + 60_000;
  checkMs(WHERE, 'leaseMs', leaseMs, { max: MAX_TIMER_MS });
  if (leaseMs < batchMs) {
    fail(`leaseMs (${leaseMs}) must outlast a round: batchSize / maxPollsPerSecond is ${batchMs} ms`);
  }
  const backoffMs = options.pollBackoffMs ?? DEFAULT_POLL_BACKOFF_MS;
  checkMs(WHERE, 'pollBackoffMs', backoffMs, { max: MAX_TIMER_MS });
  const maxBackoffMs = options.maxPollBackoffMs ?? Math.max(DEFAULT_MAX_POLL_BACKOFF_MS, backoffMs);
  checkMs(WHERE, 'maxPollBackoffMs', maxBackoffMs, { max: MAX_TIMER_MS });
  if (maxBackoffMs < backoffMs) fail(`maxPollBackoffMs (${maxBackoffMs}) must not be below pollBackoffMs (${backoffMs})`);
  const horizonMs = options.horizonMs ?? DEFAULT_RECONCILE_HORIZON_MS;
  positive('horizonMs', horizonMs, Number.MAX_SAFE_INTEGER);
  const graceMs = options.unattachedGraceMs ?? DEFAULT_UNATTACHED_GRACE_MS;
  positive('unattachedGraceMs', graceMs, Number.MAX_SAFE_INTEGER);
  const logger = resolveLogger(WHERE, options.logger);
  const clock = checkMethods<Clock>(WHERE, 'clock', options.clock ?? Date, ['now'], 'returning ms since the epoch');

  return {
    client,
    ledger,
    receiver,
    onOutcome,
    metrics,
    intervalMs,
    batchSize,
    maxPollsPerSecond: perSecond,
    concurrency,
    leaseMs,
    pollBackoffMs: backoffMs,
    maxPollBackoffMs: maxBackoffMs,
    horizonMs,
    unattachedGraceMs: graceMs,
    logger,
    clock,
  };
}
