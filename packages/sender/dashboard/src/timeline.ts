import type { Attempt } from './api.js';
import { s, shortTime } from './dom.js';

const WIDTH = 720;
const ROW = 34;
const LEFT = 70;
const RIGHT = 16;

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
  const height = 28 + ROW * Math.max(1, rounds.length);
  const svg = s('svg', {
    viewBox: `0 0 ${WIDTH} ${height}`,
    class: 'timeline',
    'data-testid': 'timeline',
    role: 'img',
    'aria-label': 'delivery attempts over time',
  });
  if (attempts.length === 0) {
    svg.append(s('text', { x: LEFT, y: 24, class: 'muted' }, 'no attempt yet'));
    return svg;
  }
  const starts = attempts.map((a) => Date.parse(a.started_at));
  const ends = attempts.map((a, i) => (starts[i] as number) + a.duration_ms + (a.next_delay_ms ?? 0));
  const t0 = Math.min(...starts);
  const t1 = Math.max(...ends, t0 + 1);
  const x = (t: number): number => LEFT + ((t - t0) / (t1 - t0)) * (WIDTH - LEFT - RIGHT);
  svg.append(
    s('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: height - 14, y2: height - 14, class: 'axis' }),
    s('text', { x: LEFT, y: height - 2, class: 'tick' }, shortTime(new Date(t0).toISOString())),
    s('text', { x: WIDTH - RIGHT, y: height - 2, class: 'tick end' }, `+${((t1 - t0) / 1000).toFixed(1)} s`),
  );
  rounds.forEach((round, row) => {
    const y = 8 + row * ROW;
    svg.append(s('text', { x: 4, y: y + 15, class: 'tick' }, `round ${round}`));
    attempts.forEach((a, i) => {
      if (a.round !== round) return;
      const start = x(starts[i] as number);
      const end = Math.max(start + 6, x((starts[i] as number) + a.duration_ms));
      const label = a.status_code !== null ? String(a.status_code) : (a.error ?? '?');
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
        // Near the right edge the label goes before the bar, inside the drawing.
        end > WIDTH - RIGHT - 40
          ? s('text', { x: start - 3, y: y + 15, class: 'label end' }, label)
          : s('text', { x: end + 3, y: y + 15, class: 'label' }, label),
      );
    });
  });
  return svg;
}
