import type { JobView } from './api.js';
import { h, shortTime } from './dom.js';

/** The jobs as a table, newest first; clicking a row (or Enter on it) opens the job. */
export function renderJobTable(jobs: readonly JobView[], selected: string | null, open: (jobId: string) => void): HTMLElement {
  if (jobs.length === 0) return h('p', { class: 'muted', 'data-testid': 'no-jobs' }, 'No job yet for this key. Submit a test job.');
  const head = h('tr', {}, ...['status', 'feature', 'provider', 'receiver', 'created', 'finished', 'delivery'].map((c) => h('th', {}, c)));
  const rows = jobs.map((job) => {
    const delivery = job.webhook === undefined ? 'no receiver' : `${job.webhook.delivery}${job.webhook.round > 0 ? ` (round ${job.webhook.round})` : ''}`;
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
      h('td', {}, `${job.feature}/${job.subfeature}`),
      h('td', {}, job.model === null ? job.provider : `${job.provider} · ${job.model}`),
      h('td', { class: 'url' }, job.webhook?.receiver ?? ''),
      h('td', {}, shortTime(job.created_at)),
      h('td', {}, shortTime(job.finished_at)),
      h('td', {}, h('span', { class: `pill d-${job.webhook?.delivery ?? 'none'}`, 'data-testid': 'job-delivery' }, delivery)),
    );
  });
  return h('table', { class: 'jobs' }, h('thead', {}, head), h('tbody', {}, ...rows));
}
