import type { Attempt } from './api.js';
import { s, shortTime } from './dom.js';

const WIDTH = 720;
const ROW = 34;
const RIGHT = 16;
/** Space between the round label's column and the drawing, and between a bar and its status. */
const GAP = 10;
/**
 * An upper bound of a label's width in the drawing's units (11 px text; `m`/`w`, capitals and `_`
 * are the widest characters labels hold): the text is laid out before it is drawn, so from this.
 */
const textWidth = (text: string): number => [...text].reduce((w, c) => w + (/[MWmw]/.test(c) ? 11 : /[A-Z_]/.test(c) ? 8.5 : 7), 0);

/** Fill class of an attempt's bar, by outcome (colours in style.css). */
export function outcomeClass(outcome: Attempt['outcome']): string {
  return `o-${outcome}`;
}

/**
 * A job's delivery attempts on a time line: one row per round, a bar per attempt from its start for
 * its latency (wide enough to see), labelled with the HTTP status or the error, and a dashed line
 * for the wait before the next retry. Hovering a bar shows its details.
 */
export function renderTimeline(attempts: readonly Attempt[]): SVGElement {
  const rounds = [...new Set(attempts.map((a) => a.round))].sort((a, b) => a - b);
  const labelOf = (a: Attempt): string => (a.status_code !== null ? String(a.status_code) : (a.error ?? '?'));
  // Three columns that never share a point: the round labels, then (past a gap) the time scale,
  // then room for the widest status, which always goes after its bar.
  const left = 4 + Math.max(0, ...rounds.map((r) => textWidth(`round ${r}`))) + GAP;
  const scaleEnd = WIDTH - RIGHT - GAP - Math.max(0, ...attempts.map((a) => textWidth(labelOf(a))));
  const height = 28 + ROW * Math.max(1, rounds.length);
  const svg = s('svg', {
    viewBox: `0 0 ${WIDTH} ${height}`,
    class: 'timeline',
    'data-testid': 'timeline',
    role: 'img',
    'aria-label': 'delivery attempts over time',
  });
  if (attempts.length === 0) {
    svg.append(s('text', { x: left, y: 24, class: 'muted' }, 'no attempt yet'));
    return svg;
  }
  const starts = attempts.map((a) => Date.parse(a.started_at));
  const ends = attempts.map((a, i) => (starts[i] as number) + a.duration_ms + (a.next_delay_ms ?? 0));
  const t0 = Math.min(...starts);
  const t1 = Math.max(...ends, t0 + 1);
  const x = (t: number): number => left + ((t - t0) / (t1 - t0)) * (scaleEnd - left);
  svg.append(
    s('line', { x1: left, x2: scaleEnd, y1: height - 14, y2: height - 14, class: 'axis' }),
    s('text', { x: left, y: height - 2, class: 'tick' }, shortTime(new Date(t0).toISOString())),
    s('text', { x: scaleEnd, y: height - 2, class: 'tick end' }, `+${((t1 - t0) / 1000).toFixed(1)} s`),
  );
  rounds.forEach((round, row) => {
    const y = 8 + row * ROW;
    svg.append(s('text', { x: 4, y: y + 15, class: 'tick', 'data-testid': 'timeline-round-label' }, `round ${round}`));
    attempts.forEach((a, i) => {
      if (a.round !== round) return;
      const start = x(starts[i] as number);
      const end = Math.max(start + 6, x((starts[i] as number) + a.duration_ms));
      const label = labelOf(a);
      if (a.next_delay_ms !== null) {
        svg.append(
          s('line', { x1: end, x2: x((starts[i] as number) + a.duration_ms + a.next_delay_ms), y1: y + 10, y2: y + 10, class: 'wait' }),
        );
      }
      svg.append(
        s(
          'rect',
          {
            x: start,
            y,
            width: end - start,
            height: 20,
            rx: 3,
            class: `bar ${outcomeClass(a.outcome)}`,
            'data-testid': 'timeline-attempt',
          },
          s('title', {}, `round ${a.round} attempt ${a.attempt}: ${label} in ${a.duration_ms} ms (${a.outcome})`),
        ),
        s('text', { x: end + 3, y: y + 15, class: 'label', 'data-testid': 'timeline-status' }, label),
      );
    });
  });
  return svg;
}
