/** A job as `GET /v3/universal-ai/async[/{job_id}]` answers it (the members the page reads). */
export interface JobView {
  job_id: string;
  status: 'processing' | 'success' | 'fail';
  feature: string;
  subfeature: string;
  provider: string;
  model: string | null;
  created_at: string;
  finished_at: string | null;
  webhook?: { receiver: string; delivery: 'pending' | 'delivered' | 'rejected' | 'failed'; round: number };
}

/** One delivery attempt of `GET …/deliveries`. */
export interface Attempt {
  round: number;
  attempt: number;
  started_at: string;
  duration_ms: number;
  url: string;
  status_code: number | null;
  error: string | null;
  error_message: string | null;
  outcome: 'delivered' | 'rejected' | 'retry' | 'failed';
  next_delay_ms: number | null;
  response_bytes: number | null;
  response_body: unknown;
  /** On a 401 answer: the id of the key the webhook was signed with (as receivers log `keyIdsTried`); else null. */
  key_id: string | null;
}

/** `GET …/deliveries`: the job's delivery state and round, and its attempts oldest first. */
export interface Deliveries {
  job_id: string;
  delivery: string | null;
  round: number;
  attempts: Attempt[];
}

/** `GET …/webhook`: the body sent, its canonical form, the headers (signature included). */
export interface WebhookView {
  body: string;
  canonical: string;
  headers: Record<string, string>;
}

/** `GET /v3/universal-ai/async`: a page of jobs, newest first. */
export interface JobPage {
  jobs: JobView[];
  next_cursor: string | null;
}

/** `GET /v3/universal-ai/async/counts`: all of the organization's jobs, by status and delivery state. */
export interface JobCounts {
  jobs: number;
  status: Record<JobView['status'], number>;
  delivery: Record<'pending' | 'delivered' | 'rejected' | 'failed' | 'none', number>;
}

/** What the list shows: filters of `GET /v3/universal-ai/async`. */
export interface ListFilters {
  status?: string;
  delivery?: string;
}

/** An answer other than 2xx: its status and the API's `detail`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
  }
}

/** The `/v3` API of this origin, called with one organization's API key. */
export class Api {
  constructor(private readonly key: string) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${this.key}` }, cache: 'no-store' };
    if (body !== undefined) {
      init.headers = { ...init.headers, 'content-type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    if (!response.ok) {
      let detail = text;
      try {
        detail = String((JSON.parse(text) as { detail?: unknown }).detail ?? text);
      } catch {
        // Not JSON: the text as it is.
      }
      throw new ApiFailure(response.status, detail);
    }
    return JSON.parse(text) as T;
  }

  /** A page of this organization's jobs, newest first. */
  list(filters: ListFilters, limit: number, cursor?: string): Promise<JobPage> {
    const query = new URLSearchParams({ limit: String(limit) });
    if (filters.status) query.set('status', filters.status);
    if (filters.delivery) query.set('delivery', filters.delivery);
    if (cursor !== undefined) query.set('cursor', cursor);
    return this.call('GET', `/v3/universal-ai/async?${query}`);
  }

  /** How many jobs the organization has in all (the list gives a page at a time). */
  counts(): Promise<JobCounts> {
    return this.call('GET', '/v3/universal-ai/async/counts');
  }

  job(jobId: string): Promise<JobView> {
    return this.call('GET', `/v3/universal-ai/async/${encodeURIComponent(jobId)}`);
  }

  deliveries(jobId: string): Promise<Deliveries> {
    return this.call('GET', `/v3/universal-ai/async/${encodeURIComponent(jobId)}/deliveries`);
  }

  webhook(jobId: string): Promise<WebhookView> {
    return this.call('GET', `/v3/universal-ai/async/${encodeURIComponent(jobId)}/webhook`);
  }

  redeliver(jobId: string): Promise<{ round: number }> {
    return this.call('POST', `/v3/universal-ai/async/${encodeURIComponent(jobId)}/redeliver`);
  }

  submit(submission: unknown): Promise<JobView> {
    return this.call('POST', '/v3/universal-ai/async', submission);
  }
}
