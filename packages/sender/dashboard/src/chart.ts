import type { Attempt, JobCounts, JobView } from './api.js';
import { h, s, shortTime } from './dom.js';

/** What the page can count only over the jobs it has loaded (their attempts are read job by job). */
export interface PageTotals {
  /** Jobs with at least one attempt that was retried. */
  retried: number;
  attempts: number;
}

/** The {@link PageTotals} of `jobs`, with each job's attempts as the page last read them. */
export function computePageTotals(jobs: readonly JobView[], attemptsOf: (jobId: string) => readonly Attempt[] | undefined): PageTotals {
  const totals: PageTotals = { retried: 0, attempts: 0 };
  for (const job of jobs) {
    const attempts = attemptsOf(job.job_id) ?? [];
    totals.attempts += attempts.length;
    if (attempts.some((a) => a.outcome === 'retry')) totals.retried++;
  }
  return totals;
}

/**
 * Two rows of small boxes: the organization's jobs in all (`GET …/counts`: every job, not only the
 * page), then what only the loaded page's attempts tell, labelled so.
 */
export function renderTotals(all: JobCounts | null, page: PageTotals): HTMLElement {
  const item = (name: string, value: number | null, help: string, cls = '', label = name): HTMLElement =>
    h(
      'div',
      { class: `total ${cls}`, 'data-testid': `total-${name}`, title: help },
      h('span', { class: 'value' }, value ?? '…'),
      h('span', { class: 'name' }, label),
    );
  return h(
    'div',
    { class: 'totals' },
    h(
      'div',
      { class: 'group', 'data-testid': 'totals-all' },
      h('span', { class: 'group-name' }, 'all jobs'),
      h(
        'div',
        { class: 'boxes' },
        item('jobs', all?.jobs ?? null, "all of the organization's jobs"),
        item('delivered', all?.delivery.delivered ?? null, 'webhook delivered (2xx)', 'o-delivered'),
        // Told apart: a refusal is the receiver's answer (fix the receiver or its key, then redeliver),
        // a failure is the receiver out of reach (it may take the redelivery as it is).
        item(
          'refused',
          all?.delivery.rejected ?? null,
          'webhook refused: the receiver answered 4xx (or 3xx), or its address was refused; never retried',
          'o-failed',
          'refused (4xx)',
        ),
        item(
          'failed',
          all?.delivery.failed ?? null,
          'webhook failed: no answer (connection error, timeout) or 5xx on every attempt, retries exhausted',
          'o-failed',
          'failed (network/5xx)',
        ),
        item('pending', all?.delivery.pending ?? null, 'webhook not delivered yet'),
      ),
    ),
    h(
      'div',
      { class: 'group', 'data-testid': 'totals-page' },
      h('span', { class: 'group-name' }, 'this page'),
      h(
        'div',
        { class: 'boxes' },
        item('retried', page.retried, "this page's jobs with a retried attempt", 'o-retry'),
        item('attempts', page.attempts, "delivery attempts of this page's jobs"),
      ),
    ),
  );
}

const WIDTH = 360;
const HEIGHT = 90;
const BUCKETS = 24;

/** Attempts over time, in equal time buckets, stacked by outcome: a tiny SVG bar chart. */
export function renderAttemptsChart(attempts: readonly Attempt[]): SVGElement {
  const svg = s('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'chart',
    'data-testid': 'attempts-chart',
    role: 'img',
    'aria-label': 'attempts over time',
  });
  if (attempts.length === 0) {
    svg.append(s('text', { x: 8, y: HEIGHT / 2, class: 'muted' }, 'no attempt yet'));
    return svg;
  }
  const times = attempts.map((a) => Date.parse(a.started_at));
  const t0 = Math.min(...times);
  const span = Math.max(1000, Math.max(...times) - t0 + 1);
  const buckets = Array.from({ length: BUCKETS }, () => ({ ok: 0, retry: 0, bad: 0 }));
  attempts.forEach((a, i) => {
    const bucket = buckets[Math.min(BUCKETS - 1, Math.floor((((times[i] as number) - t0) / span) * BUCKETS))];
    if (bucket === undefined) return;
    if (a.outcome === 'delivered') bucket.ok++;
    else if (a.outcome === 'retry') bucket.retry++;
    else bucket.bad++;
  });
  const most = Math.max(1, ...buckets.map((b) => b.ok + b.retry + b.bad));
  const bucket = span / BUCKETS;
  const plot = HEIGHT - 16;
  const bw = WIDTH / BUCKETS;
  buckets.forEach((b, i) => {
    let top = plot;
    for (const [count, cls] of [
      [b.ok, 'o-delivered'],
      [b.retry, 'o-retry'],
      [b.bad, 'o-failed'],
    ] as const) {
      if (count === 0) continue;
      const hgt = (count / most) * (plot - 4);
      top -= hgt;
      svg.append(
        s('rect', { x: i * bw + 1, y: top, width: bw - 2, height: hgt, class: `bar ${cls}` }, s('title', {}, `${count} ${cls.slice(2)}`)),
      );
    }
  });
  svg.append(
    s('line', { x1: 0, x2: WIDTH, y1: plot, y2: plot, class: 'axis' }),
    s('text', { x: 0, y: HEIGHT - 2, class: 'tick' }, shortTime(new Date(t0).toISOString())),
    s(
      'text',
      { x: WIDTH, y: HEIGHT - 2, class: 'tick end' },
      `${most} max / bucket of ${bucket < 1000 ? `${Math.round(bucket)} ms` : `${(bucket / 1000).toFixed(1)} s`}`,
    ),
  );
  return svg;
}
