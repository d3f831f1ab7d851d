import type { AttemptRecord, Deliverer, DeliverySubject } from '@jobhook/delivery';
import { Counter, Histogram, Registry } from 'prom-client';

/**
 * What a counted attempt came to: its `outcome`, except that the two refusals before anything is
 * sent get their own value (they are the service's or the submitter's problem, not the receiver's).
 */
export type DeliveryResult = AttemptRecord['outcome'] | 'ssrf_refused' | 'payload_invalid';

/**
 * Attempts the deliverer returns without recording them (documented on `Deliverer.attempt`): a
 * stale or ended round, a job gone or without receiver. Nothing was attempted, so nothing is counted.
 */
const NOT_ATTEMPTED: ReadonlySet<string> = new Set(['stale_round', 'round_ended', 'job_not_found', 'no_receiver']);

/** Upper bounds (seconds) of the attempt histogram: a local receiver answers in ms, the attempt deadline is 30 s. */
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

/** The reference service's delivery metrics. @internal */
export interface SenderMetrics {
  /** The sender's own registry (a fresh one per sender, so several senders in one process never clash). */
  readonly registry: Registry;
  /** Counts one attempt record; not-attempted records are ignored. */
  observeAttempt(record: AttemptRecord): void;
}

/** The result label of a record, or undefined when nothing was attempted. @internal */
export function deliveryResult(record: AttemptRecord): DeliveryResult | undefined {
  if (record.outcome !== 'rejected' || record.error === null) return record.outcome;
  if (NOT_ATTEMPTED.has(record.error)) return undefined;
  if (record.error === 'ssrf_refused' || record.error === 'payload_invalid') return record.error;
  return 'rejected';
}

/**
 * `jobhook_sender_deliveries_total{result}` and `jobhook_sender_delivery_attempt_duration_seconds{result}`
 * in a new registry.
 * @internal
 */
export function createSenderMetrics(): SenderMetrics {
  const registry = new Registry();
  const deliveries = new Counter({
    name: 'jobhook_sender_deliveries_total',
    help: 'Webhook delivery attempts, by result: delivered, rejected (3xx/4xx), retry, failed (last attempt), ssrf_refused, payload_invalid',
    labelNames: ['result'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'jobhook_sender_delivery_attempt_duration_seconds',
    help: "Time of one webhook delivery attempt, from its start to the answer's status line or the error, by result",
    labelNames: ['result'],
    buckets: ATTEMPT_BUCKETS,
    registers: [registry],
  });
  // Zero from the start, so rates and alerts work before the first delivery of each kind.
  for (const result of ['delivered', 'rejected', 'retry', 'failed'] satisfies DeliveryResult[]) deliveries.inc({ result }, 0);
  return {
    registry,
    observeAttempt(record) {
      const result = deliveryResult(record);
      if (result === undefined) return;
      deliveries.inc({ result });
      duration.observe({ result }, record.durationMs / 1000);
    },
  };
}

/**
 * `deliverer` with every record it returns also given to `observe`: the metrics watch attempts
 * from outside, the delivery logic knows nothing of them. A throwing observer is ignored.
 * @internal
 */
export function observeDeliverer<J extends DeliverySubject>(
  deliverer: Deliverer<J>,
  observe: (record: AttemptRecord) => void,
): Deliverer<J> {
  return {
    webhook: (job) => deliverer.webhook(job),
    async attempt(task) {
      const record = await deliverer.attempt(task);
      try {
        observe(record);
      } catch {
        // Metrics must never change a delivery's course.
      }
      return record;
    },
  };
}
