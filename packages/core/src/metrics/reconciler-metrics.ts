import type { Registry } from 'prom-client';
import type { LedgerCounts } from '../ledger/job-ledger.js';
import type { ReconcileOutcome } from '../ledger/reconcile-outcome.js';
import { resolveReconcilerMetricsOptions, type ReconcilerMetricsOptions } from './metrics-option-checks.js';
import { registeredCounter, registeredGauge } from './registered-metric.js';

/** A reconciler's metrics: give it as the reconciler's `metrics` option. */
export interface ReconcilerMetrics {
  /** Counts one outcome. Never throws. */
  readonly observe: (outcome: ReconcileOutcome) => void;
  /** Sets the outstanding-jobs gauge from the ledger's counts. Never throws. */
  readonly outstanding: (counts: LedgerCounts) => void;
  /** The registry the metrics are in. */
  readonly registry: Registry;
}

const OWNER = 'createReconcilerMetrics';

/**
 * Prometheus metrics of a reconciler (`createReconciler` of `@jobhook/client`):
 * - `jobhook_jobs_outstanding{state}`: ledger entries, `attached` (a job id, polled once due) and
 *   `unattached` (no job id yet), set after every round;
 * - `jobhook_reconciler_polls_total{outcome}`: due entries looked at, by outcome (`reconciled`: the
 *   result came by poll and was handled; `already-handled`, `pending`, `in-flight`,
 *   `handler-failed`, `rate-limited`, `poll-failed`, `waiting-for-job-id`, `abandoned`);
 * - `jobhook_jobs_reconciled_total`: results that came by poll and were handled;
 * - `jobhook_jobs_abandoned_total{reason}`: entries given up on (`not-found`, `horizon`, `no-job-id`,
 *   `answer-too-large`).
 *
 * Label values come from fixed sets, never from the service's answers.
 *
 * @example
 * ```ts
 * const metrics = createReconcilerMetrics();
 * const reconciler = createReconciler({ client, ledger, receiver, metrics });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` for a wrong option, or a name the registry holds with another type or labels.
 */
export function createReconcilerMetrics(options: ReconcilerMetricsOptions = {}): ReconcilerMetrics {
  const { registry, prefix } = resolveReconcilerMetricsOptions(options);
  const outstanding = registeredGauge(registry, OWNER, {
    name: `${prefix}jobs_outstanding`,
    help: 'Jobs in the expected-jobs ledger: submitted with a webhook_receiver and not handled yet',
    labelNames: ['state'],
  });
  const polls = registeredCounter(registry, OWNER, {
    name: `${prefix}reconciler_polls_total`,
    help: 'Due ledger entries the reconciler looked at, by outcome',
    labelNames: ['outcome'],
  });
  const reconciled = registeredCounter(registry, OWNER, {
    name: `${prefix}jobs_reconciled_total`,
    help: 'Job results that came by poll (no webhook got through) and were handled',
    labelNames: [],
  });
  const abandoned = registeredCounter(registry, OWNER, {
    name: `${prefix}jobs_abandoned_total`,
    help: 'Ledger entries given up on, by reason',
    labelNames: ['reason'],
  });
  return {
    registry,
    observe(outcome) {
      polls.inc({ outcome: outcome.kind });
      if (outcome.kind === 'reconciled') reconciled.inc();
      if (outcome.kind === 'abandoned') abandoned.inc({ reason: outcome.reason ?? 'horizon' });
    },
    outstanding(counts) {
      outstanding.set({ state: 'attached' }, counts.attached);
      outstanding.set({ state: 'unattached' }, counts.unattached);
    },
  };
}
