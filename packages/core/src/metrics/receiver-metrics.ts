/**
 * `@jobhook/core/metrics`: Prometheus metrics of a receiver, fed by its `onOutcome`. A subpath of its
 * own so that the main entry never loads `prom-client` (an optional peer dependency).
 * @packageDocumentation
 */
import { register as globalRegistry, type Registry } from 'prom-client';
import { optionError } from '../internal/option-checks.js';
import type { ReceiverOutcome } from '../receiver/receiver-outcome.js';
import { checkPrefix, registeredCounter, registeredHistogram } from './registered-metric.js';

/** Default {@link ReceiverMetricsOptions.prefix}. */
export const DEFAULT_METRICS_PREFIX = 'jobhook_';

/**
 * Default {@link ReceiverMetricsOptions.buckets}, in seconds: a rejection takes microseconds, a
 * handler up to `handlerTimeoutMs` (25 s by default), so from 1 ms to 30 s.
 */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 30];

/** Options of {@link createReceiverMetrics}. */
export interface ReceiverMetricsOptions {
  /** Where the metrics are registered. Default prom-client's global `register`. */
  registry?: Registry;
  /** Start of every metric name. Default `'jobhook_'`. */
  prefix?: string;
  /** Upper bounds (seconds) of the duration histogram. Default {@link DEFAULT_DURATION_BUCKETS}. */
  buckets?: readonly number[];
}

/** A receiver's metrics. */
export interface ReceiverMetrics {
  /** Counts one outcome: give it as `onOutcome` (it is bound), or call it from yours. Never throws. */
  readonly observe: (outcome: ReceiverOutcome) => void;
  /** The registry the metrics are in: answer `GET /metrics` with `await registry.metrics()` and `registry.contentType`. */
  readonly registry: Registry;
}

const OWNER = 'createReceiverMetrics';

function checkBuckets(buckets: unknown): number[] {
  const ok =
    Array.isArray(buckets) &&
    buckets.length > 0 &&
    buckets.every((b, i) => typeof b === 'number' && Number.isFinite(b) && b > 0 && (i === 0 || b > (buckets[i - 1] as number)));
  if (!ok) throw optionError(OWNER, 'buckets must be increasing positive finite numbers (seconds)');
  return [...(buckets as number[])];
}

/**
 * Prometheus metrics of a receiver:
 * - `jobhook_webhooks_total{outcome,status,code}`: requests by outcome (`handled`, `duplicate`,
 *   `in-flight`, `handler-failed`, `handler-timeout`, `store-unavailable`, `handlers-busy`, `rejected`),
 *   HTTP status and error code (`''` for `handled` and `duplicate`);
 * - `jobhook_webhook_duration_seconds{outcome}`: time from the request to the answer.
 *
 * Every label value comes from a fixed set (outcome kinds, `ERROR_STATUS` codes and their statuses),
 * never from the request. Receivers given metrics on the same registry and prefix add up to the same
 * series; a name taken by a metric of another shape is refused.
 *
 * @example
 * ```ts
 * const metrics = createReceiverMetrics();
 * app.post('/webhooks/jobs', createExpressMiddleware({ publicKeys, onEvent, onOutcome: metrics.observe }));
 * app.get('/metrics', async (_req, res) => {
 *   res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
 * });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` for a wrong option, or a metric name the registry already
 * holds with another type or labels.
 */
export function createReceiverMetrics(options: ReceiverMetricsOptions = {}): ReceiverMetrics {
  if (typeof options !== 'object' || options === null) throw optionError(OWNER, 'options must be an object');
  const { registry = globalRegistry, prefix = DEFAULT_METRICS_PREFIX, buckets = DEFAULT_DURATION_BUCKETS } = options;
  if (typeof registry !== 'object' || registry === null || typeof registry.getSingleMetric !== 'function') {
    throw optionError(OWNER, 'registry must be a prom-client Registry');
  }
  checkPrefix(prefix, OWNER);
  const requests = registeredCounter(registry, OWNER, {
    name: `${prefix}webhooks_total`,
    help: 'Webhook requests answered, by outcome, HTTP status and jobhook error code',
    labelNames: ['outcome', 'status', 'code'],
  });
  const duration = registeredHistogram(registry, OWNER, {
    name: `${prefix}webhook_duration_seconds`,
    help: 'Time from a webhook request to its answer, by outcome',
    labelNames: ['outcome'],
    buckets: checkBuckets(buckets),
  });
  return {
    registry,
    observe(outcome) {
      requests.inc({ outcome: outcome.kind, status: outcome.status, code: outcome.code ?? '' });
      duration.observe({ outcome: outcome.kind }, outcome.durationMs / 1000);
    },
  };
}
export { createReconcilerMetrics, type ReconcilerMetrics, type ReconcilerMetricsOptions } from './reconciler-metrics.js';
