import type { JobView } from './api.js';
import { h, shortTime } from './dom.js';

const clock = (iso: string | null): string => shortTime(iso).replace(/\.\d{3}$/, '');

/** The jobs as a table, newest first; clicking a row (or Enter on it) opens the job. */
export function renderJobTable(jobs: readonly JobView[], selected: string | null, open: (jobId: string) => void): HTMLElement {
  if (jobs.length === 0) return h('p', { class: 'muted', 'data-testid': 'no-jobs' }, 'No job yet for this key. Submit a test job.');
  const head = h('tr', {}, ...['status', 'delivery', 'feature', 'provider', 'receiver', 'created', 'finished'].map((c) => h('th', {}, c)));
  const rows = jobs.map((job) => {
    const delivery =
      job.webhook === undefined ? 'no receiver' : `${job.webhook.delivery}${job.webhook.round > 0 ? ` (round ${job.webhook.round})` : ''}`;
    return h(
      'tr',
      {
        class: job.job_id === selected ? 'selected' : '',
        tabindex: 0,
        'data-testid': 'job-row',
        'data-job-id': job.job_id,
        'data-delivery': job.webhook?.delivery ?? 'none',
        onclick: () => open(job.job_id),
        onkeydown: (event) => {
          if ((event as KeyboardEvent).key === 'Enter') open(job.job_id);
        },
      },
      h('td', {}, h('span', { class: `pill s-${job.status}` }, job.status)),
      h('td', {}, h('span', { class: `pill d-${job.webhook?.delivery ?? 'none'}`, 'data-testid': 'job-delivery' }, delivery)),
      h('td', { class: 'feature' }, job.feature, h('span', { class: 'muted' }, ` / ${job.subfeature}`)),
      h('td', {}, job.model === null ? job.provider : `${job.provider} · ${job.model}`),
      h('td', { class: 'url', title: job.webhook?.receiver ?? '' }, (job.webhook?.receiver ?? '').replace(/^https?:\/\//, '')),
      // Seconds are enough in the list; the detail shows the full instants.
      h('td', { title: job.created_at }, clock(job.created_at)),
      h('td', { title: job.finished_at ?? '' }, clock(job.finished_at)),
    );
  });
  return h('table', { class: 'jobs' }, h('thead', {}, head), h('tbody', {}, ...rows));
}
