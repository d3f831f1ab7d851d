import type { JobView } from './api.js';
import { h, shortTime } from './dom.js';

const clock = (iso: string | null): string => shortTime(iso).replace(/\.\d{3}$/, '');

/** The jobs as a table, newest first; clicking a row (or Enter on it) opens the job. */
export function renderJobTable(jobs: readonly JobView[], selected: string | null, open: (jobId: string) => void): HTMLElement {
  if (jobs.length === 0) return h('p', { class: 'muted', 'data-testid': 'no-jobs' }, 'No job yet for this key. Submit a test job.');
  // Four columns, each fact on its own line within them, so the list fits beside the open job
  // without cutting anything off: the whole job id and the whole receiver URL.
  const head = h('tr', {}, ...['job', 'status / delivery', 'receiver', 'created / finished'].map((c) => h('th', {}, c)));
  const rows = jobs.map((job) => {
    const delivery =
      job.webhook === undefined ? 'no receiver' : `${job.webhook.delivery}${job.webhook.round > 0 ? ` (round ${job.webhook.round})` : ''}`;
    const receiver = job.webhook?.receiver ?? '';
    const model = `${job.feature} / ${job.subfeature} · ${job.provider}${job.model === null ? '' : ` · ${job.model}`}`;
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
      // The whole id, as the webhook and the receiver's logs carry it: a reader can search for it.
      h('td', { class: 'job' }, h('code', { class: 'id', 'data-testid': 'job-id' }, job.job_id), h('span', { class: 'muted' }, model)),
      h(
        'td',
        { class: 'state' },
        h('span', { class: `pill s-${job.status}` }, job.status),
        h('span', { class: `pill d-${job.webhook?.delivery ?? 'none'}`, 'data-testid': 'job-delivery' }, delivery),
      ),
      // The whole URL, wrapped where it must: two receivers that differ only in their path or query are told apart.
      h('td', { class: 'url', title: receiver, 'data-testid': 'job-receiver' }, receiver),
      // Seconds are enough in the list; the detail shows the full instants.
      h(
        'td',
        { class: 'time' },
        h('span', { title: job.created_at }, clock(job.created_at)),
        job.finished_at === null ? null : h('span', { class: 'muted', title: job.finished_at }, clock(job.finished_at)),
      ),
    );
  });
  return h('table', { class: 'jobs' }, h('thead', {}, head), h('tbody', {}, ...rows));
}

/** Where the list is: which page, how many jobs it shows, how many there are in all (when known). */
export interface PageInfo {
  /** 1 for the newest page. */
  number: number;
  shown: number;
  /** The jobs matching the filters in all, or null when the counts cannot tell (both filters set). */
  total: number | null;
  hasNewer: boolean;
  hasOlder: boolean;
}

/** "← newer" and "older →" buttons around the page's place in the list. */
export function renderPager(info: PageInfo, newer: () => void, older: () => void): HTMLElement {
  const text = `page ${info.number} · ${info.shown} job${info.shown === 1 ? '' : 's'}${info.total === null ? '' : ` of ${info.total}`}`;
  return h(
    'div',
    { class: 'pager' },
    h('button', { type: 'button', 'data-testid': 'page-newer', disabled: !info.hasNewer, onclick: newer }, '← newer'),
    h('span', { class: 'muted', 'data-testid': 'page-info' }, text),
    h('button', { type: 'button', 'data-testid': 'page-older', disabled: !info.hasOlder, onclick: older }, 'older →'),
  );
}
