import type { Attempt, Deliveries, JobView, WebhookView } from './api.js';
import { h, shortTime } from './dom.js';
import { outcomeClass, renderTimeline } from './timeline.js';

/** What the detail panel shows of one job. */
export interface JobDetail {
  job: JobView;
  deliveries: Deliveries | null;
  webhook: WebhookView | null;
}

function attemptRow(a: Attempt): HTMLElement {
  const answer =
    a.response_body === null ? (a.response_bytes === null ? '' : `${a.response_bytes} bytes (not kept)`) : JSON.stringify(a.response_body);
  return h(
    'tr',
    { 'data-testid': 'attempt-row', 'data-outcome': a.outcome },
    h('td', {}, a.round),
    h('td', {}, a.attempt),
    h('td', {}, shortTime(a.started_at)),
    h('td', {}, a.status_code === null ? h('span', { title: a.error_message ?? '' }, a.error ?? '') : a.status_code),
    h('td', {}, `${a.duration_ms} ms`),
    h('td', {}, h('span', { class: `pill ${outcomeClass(a.outcome)}` }, a.outcome)),
    h(
      'td',
      {},
      a.next_delay_ms === null ? '' : a.next_delay_ms < 1000 ? `in ${a.next_delay_ms} ms` : `in ${(a.next_delay_ms / 1000).toFixed(1)} s`,
    ),
    h(
      'td',
      { class: 'answer' },
      h('span', { 'data-testid': 'attempt-answer' }, answer),
      // A 401 most often means the receiver holds another public key: the id it can be compared with.
      a.key_id === null || a.key_id === undefined
        ? null
        : h('span', { class: 'key-id', 'data-testid': 'attempt-key-id' }, `signed with key id ${a.key_id}`),
    ),
  );
}

/** One job: its facts, the redeliver button, attempts on a timeline and in a table, and its webhook as sent. */
export function renderJobDetail(detail: JobDetail, redeliver: () => void, message: string): HTMLElement {
  const { job, deliveries, webhook } = detail;
  const attempts = deliveries?.attempts ?? [];
  const canRedeliver = job.webhook !== undefined && job.status !== 'processing' && job.webhook.delivery !== 'pending';
  return h(
    'section',
    { class: 'detail', 'data-testid': 'job-detail', 'data-job-id': job.job_id },
    h('h2', {}, 'Job ', h('code', {}, job.job_id)),
    h(
      'dl',
      {},
      h('dt', {}, 'status'),
      h('dd', {}, job.status),
      h('dt', {}, 'model'),
      h('dd', {}, `${job.feature}/${job.subfeature}/${job.provider}${job.model === null ? '' : `/${job.model}`}`),
      h('dt', {}, 'created'),
      h('dd', {}, job.created_at),
      h('dt', {}, 'finished'),
      h('dd', {}, job.finished_at ?? '—'),
      h('dt', {}, 'receiver'),
      h('dd', {}, job.webhook?.receiver ?? 'none'),
      h('dt', {}, 'delivery'),
      h(
        'dd',
        { 'data-testid': 'detail-delivery' },
        job.webhook === undefined ? '—' : `${job.webhook.delivery}, round ${job.webhook.round}`,
      ),
    ),
    h(
      'p',
      { class: 'actions' },
      h('button', { type: 'button', 'data-testid': 'redeliver', disabled: !canRedeliver, onclick: redeliver }, 'Redeliver'),
      h('span', { class: 'message', 'data-testid': 'detail-message', role: 'status' }, message),
    ),
    h('h3', {}, 'Attempts'),
    renderTimeline(attempts),
    attempts.length === 0
      ? null
      : h(
          'table',
          { class: 'attempts' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['round', 'attempt', 'time', 'HTTP / error', 'latency', 'outcome', 'next retry', "receiver's answer"].map((c) =>
                h('th', {}, c),
              ),
            ),
          ),
          h('tbody', {}, ...attempts.map(attemptRow)),
        ),
    h('h3', {}, 'Webhook as sent'),
    webhook === null
      ? h('p', { class: 'muted' }, job.status === 'processing' ? 'Built when the job finishes.' : 'Loading…')
      : h(
          'div',
          { class: 'webhook' },
          h('h4', {}, 'Headers (signature included)'),
          h(
            'pre',
            { 'data-testid': 'webhook-headers' },
            Object.entries(webhook.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n'),
          ),
          h('h4', {}, 'Body'),
          h('pre', { 'data-testid': 'webhook-body' }, webhook.body),
          h('h4', {}, 'Canonical form (what the signature covers)'),
          h('pre', { 'data-testid': 'webhook-canonical' }, webhook.canonical),
        ),
  );
}
