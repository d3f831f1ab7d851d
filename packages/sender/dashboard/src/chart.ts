import type { Attempt, JobView } from './api.js';
import { h, s, shortTime } from './dom.js';

/** Job counts the page shows above the list (over the jobs it has loaded). */
export interface Totals {
  jobs: number;
  delivered: number;
  /** Jobs with at least one attempt that was retried. */
  retried: number;
  /** Delivery failed (retries exhausted) or rejected (4xx, refused). */
  failed: number;
  pending: number;
  attempts: number;
}

/** The {@link Totals} of `jobs`, with each job's attempts as the page last read them. */
export function computeTotals(jobs: readonly JobView[], attemptsOf: (jobId: string) => readonly Attempt[] | undefined): Totals {
  const totals: Totals = { jobs: jobs.length, delivered: 0, retried: 0, failed: 0, pending: 0, attempts: 0 };
  for (const job of jobs) {
    const delivery = job.webhook?.delivery;
    if (delivery === 'delivered') totals.delivered++;
    else if (delivery === 'failed' || delivery === 'rejected') totals.failed++;
    else if (delivery === 'pending') totals.pending++;
    const attempts = attemptsOf(job.job_id) ?? [];
    totals.attempts += attempts.length;
    if (attempts.some((a) => a.outcome === 'retry')) totals.retried++;
  }
  return totals;
}

/** The totals as a row of small boxes. */
export function renderTotals(t: Totals): HTMLElement {
  const item = (name: string, value: number, cls = ''): HTMLElement =>
    h(
      'div',
      { class: `total ${cls}`, 'data-testid': `total-${name}` },
      h('span', { class: 'value' }, value),
      h('span', { class: 'name' }, name),
    );
  return h(
    'div',
    { class: 'totals' },
    item('jobs', t.jobs),
    item('delivered', t.delivered, 'o-delivered'),
    item('retried', t.retried, 'o-retry'),
    item('failed', t.failed, 'o-failed'),
    item('pending', t.pending),
    item('attempts', t.attempts),
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
