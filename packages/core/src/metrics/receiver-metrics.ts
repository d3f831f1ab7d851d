/**
 * `@jobhook/core/metrics`: Prometheus metrics of a receiver, fed by its `onOutcome`. A subpath of its
 * own so that the main entry never loads `prom-client` (an optional peer dependency).
 * @packageDocumentation
 */
import type { Registry } from 'prom-client';
import type { ReceiverOutcome } from '../receiver/receiver-outcome.js';
import { resolveReceiverMetricsOptions, type ReceiverMetricsOptions } from './metrics-option-checks.js';
import { registeredCounter, registeredHistogram } from './registered-metric.js';

/** A receiver's metrics. */
export interface ReceiverMetrics {
  /** Counts one outcome: give it as `onOutcome` (it is bound), or call it from yours. Never throws. */
  readonly observe: (outcome: ReceiverOutcome) => void;
  /** The registry the metrics are in: answer `GET /metrics` with `await registry.metrics()` and `registry.contentType`. */
  readonly registry: Registry;
}

const OWNER = 'createReceiverMetrics';

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
  const { registry, prefix, buckets } = resolveReceiverMetricsOptions(options);
  const requests = registeredCounter(registry, OWNER, {
    name: `${prefix}webhooks_total`,
    help: 'Webhook requests answered, by outcome, HTTP status and jobhook error code',
    labelNames: ['outcome', 'status', 'code'],
  });
  const duration = registeredHistogram(registry, OWNER, {
    name: `${prefix}webhook_duration_seconds`,
    help: 'Time from a webhook request to its answer, by outcome',
    labelNames: ['outcome'],
    buckets,
  });
  return {
    registry,
    observe(outcome) {
      requests.inc({ outcome: outcome.kind, status: outcome.status, code: outcome.code ?? '' });
      duration.observe({ outcome: outcome.kind }, outcome.durationMs / 1000);
    },
  };
}
export { createReconcilerMetrics, type ReconcilerMetrics } from './reconciler-metrics.js';
export {
  DEFAULT_DURATION_BUCKETS,
  DEFAULT_METRICS_PREFIX,
  type ReceiverMetricsOptions,
  type ReconcilerMetricsOptions,
} from './metrics-option-checks.js';
