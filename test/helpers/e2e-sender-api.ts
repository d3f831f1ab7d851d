// The sender's HTTP API as a user calls it with fetch: submissions go out as JSON text written by the
// test (so `1.0` and 2**70 reach the service exactly), answers are read back as text and as JSON.
import { waitUntil } from './e2e-wait.js';

/** One attempt as `GET .../deliveries` lists it. */
export interface DeliveryAttemptView {
  round: number;
  attempt: number;
  started_at: string;
  duration_ms: number;
  url: string;
  address: string | null;
  status_code: number | null;
  error: string | null;
  error_message: string | null;
  outcome: 'delivered' | 'rejected' | 'retry' | 'failed';
  next_delay_ms: number | null;
  /** The receiver's answer when it is a jobhook answer (what the submitter sees of it), else null. */
  response_body?: unknown;
}

/** `GET /v3/universal-ai/async/{job_id}/deliveries`. */
export interface DeliveriesView {
  job_id: string;
  /** Current delivery round (0, then +1 per redeliver). */
  round: number;
  delivery: 'pending' | 'delivered' | 'rejected' | 'failed' | null;
  attempts: DeliveryAttemptView[];
}

/** The sender API of one base URL and token. */
export interface SenderApi {
  /** POSTs `bodyText` as is to `/v3/universal-ai/async`; returns the `job_id` (throws on a non-2xx answer). */
  submit(bodyText: string): Promise<string>;
  /** `GET /v3/universal-ai/async/{id}`: the answer's exact text. */
  pollText(jobId: string): Promise<string>;
  deliveries(jobId: string): Promise<DeliveriesView>;
  /** `POST /v3/universal-ai/async/{id}/redeliver`: starts the next delivery round and returns its number. */
  redeliver(jobId: string): Promise<number>;
  /** Polls the deliveries until `delivery` is no longer `pending` (or `timeoutMs` passed). */
  waitForFinalDelivery(jobId: string, timeoutMs: number): Promise<DeliveriesView>;
}

/**
 * A fetch client of the sender's `/v3` API for the end-to-end tests.
 *
 * @example
 * ```ts
 * const api = createSenderApi(await sender.listen({ port: 0 }), sender.devKeys!.inference);
 * const id = await api.submit('{"model":"ocr/ocr_async/simulated","input":{"file":"x"},"webhook_receiver":"http://127.0.0.1:3000/webhooks/jobs"}');
 * const d = await api.waitForFinalDelivery(id, 10_000);
 * ```
 */
export function createSenderApi(baseUrl: string, token: string): SenderApi {
  const headers = { authorization: `Bearer ${token}` };
  const call = async (method: string, path: string, body?: string): Promise<string> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return text;
  };
  const deliveries = async (jobId: string): Promise<DeliveriesView> =>
    JSON.parse(await call('GET', `/v3/universal-ai/async/${jobId}/deliveries`)) as DeliveriesView;

  return {
    async submit(bodyText) {
      const answer = JSON.parse(await call('POST', '/v3/universal-ai/async', bodyText)) as { job_id?: unknown };
      if (typeof answer.job_id !== 'string') throw new Error(`submit answered without a job_id: ${JSON.stringify(answer)}`);
      return answer.job_id;
    },
    pollText: (jobId) => call('GET', `/v3/universal-ai/async/${jobId}`),
    deliveries,
    async redeliver(jobId) {
      const answer = JSON.parse(await call('POST', `/v3/universal-ai/async/${jobId}/redeliver`)) as { round?: unknown };
      if (typeof answer.round !== 'number') throw new Error(`redeliver answered without a round: ${JSON.stringify(answer)}`);
      return answer.round;
    },
    async waitForFinalDelivery(jobId, timeoutMs) {
      let last: DeliveriesView | undefined;
      return waitUntil(
        async () => {
          last = await deliveries(jobId);
          return last.delivery === 'pending' ? undefined : last;
        },
        { timeoutMs, intervalMs: 50, what: () => `a final delivery state of job ${jobId}; last seen ${JSON.stringify(last)}` },
      );
    },
  };
}
