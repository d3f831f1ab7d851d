import type { AttemptRecord } from './delivery-types.js';

/**
 * Where the webhook of a job stands.
 * - `pending`: queued or retrying;
 * - `delivered`: a 2xx answer;
 * - `rejected`: a 4xx answer, or the receiver refused by the SSRF guard: not retried;
 * - `failed`: every attempt of the retry budget failed (5xx, timeout, network).
 */
export type DeliveryState = 'pending' | 'delivered' | 'rejected' | 'failed';

/** What the deliverer reads of a job: its receiver and where its delivery stands. */
export interface DeliverySubject {
  jobId: string;
  /** The URL to POST the webhook to; null when the job has none (nothing is sent). */
  webhookReceiver: string | null;
  /** Null when the job has no receiver. */
  delivery: DeliveryState | null;
  /** Redelivery round: 0 for the first delivery, +1 for each redelivery. */
  deliveryRound: number;
}

/**
 * The store the deliverer reads jobs from and writes their deliveries to: each attempt appended to
 * the job's deliveries log, and each round ended once. A service's own job store implements it
 * (the reference sender's `JobStore` does); `J` is that store's job record.
 */
export interface DeliveryLog<J extends DeliverySubject = DeliverySubject> {
  get(jobId: string): Promise<J | undefined>;
  /** Appends one attempt to the job's deliveries log. */
  appendAttempt(jobId: string, attempt: AttemptRecord): Promise<void>;
  /**
   * Ends round `round` with `state` atomically, only if the job's delivery is still `pending` in that
   * round; returns whether it did. A late attempt then never overwrites a newer round's state nor a
   * round already ended.
   */
  endRound(jobId: string, round: number, state: Exclude<DeliveryState, 'pending'>): Promise<boolean>;
}
