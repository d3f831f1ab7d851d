import type { Writable } from 'node:stream';

/** How `send` shows progress on stderr. */
export type ProgressMode =
  /** One line rewritten in place (`\r`) a few times a second: stderr is a terminal. */
  | 'tty'
  /** A plain line every {@link LINES_INTERVAL_MS} (`--progress` when stderr is a file or a pipe: CI logs). */
  | 'lines'
  /** Nothing: stderr is not a terminal and `--progress` was not given, or `--no-progress`. */
  | 'off';

/** Refresh period of the in-place line. */
export const TTY_INTERVAL_MS = 200;
/** Period of the plain lines: modest, so a long run's log stays readable. */
export const LINES_INTERVAL_MS = 1000;

/** Counts `send` feeds in, and the end of the run. */
export interface SendProgress {
  /** A delivery was sent. */
  started(): void;
  /** A delivery got its answer (`ok`: a 2xx) or failed, after `latencyMs`. */
  finished(latencyMs: number, ok: boolean): void;
  /** Stops the updates and writes the latency summary (modes `tty` and `lines`). */
  end(): Promise<void>;
}

/** The mode for these flags and this stderr: `--progress` / `--no-progress` decide, else whether stderr is a terminal. */
export function progressMode(flag: boolean | undefined, negated: boolean | undefined, stderr: Writable): ProgressMode {
  if (negated === true) return 'off';
  const tty = (stderr as { isTTY?: boolean }).isTTY === true;
  if (flag === true) return tty ? 'tty' : 'lines';
  return tty ? 'tty' : 'off';
}

/** The `p`th percentile of ascending `sorted` (nearest rank). */
export function percentileOf(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const ms = (value: number): string => `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value)} ms`;

/**
 * The latency summary written at the end, like autocannon's: deliveries, time, rate, 2xx and
 * errors, then the latency percentiles, mean, standard deviation and maximum.
 */
export function latencySummary(latencies: readonly number[], errors: number, elapsedMs: number): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = n === 0 ? 0 : sorted.reduce((s, v) => s + v, 0) / n;
  const stdev = n === 0 ? 0 : Math.sqrt(sorted.reduce((s, v) => s + (v - mean) ** 2, 0) / n);
  const rate = elapsedMs > 0 ? (n / elapsedMs) * 1000 : 0;
  const cells: [string, number][] = [
    ['p50', 50],
    ['p90', 90],
    ['p97.5', 97.5],
    ['p99', 99],
  ].map(([name, p]) => [name as string, percentileOf(sorted, p as number)]);
  return (
    `jobhook send: ${n} deliveries in ${(elapsedMs / 1000).toFixed(2)} s (${rate.toFixed(1)}/s), ${n - errors} 2xx, ${errors} errors\n` +
    `  latency  ${cells.map(([name, v]) => `${name} ${ms(v)}`).join('  ')}  avg ${ms(mean)}  stdev ${ms(stdev)}  max ${ms(sorted.at(-1) ?? 0)}\n`
  );
}

/** Options of {@link createSendProgress}. */
export interface SendProgressOptions {
  stderr: Writable;
  mode: ProgressMode;
  /** Deliveries the run will make. */
  total: number;
  /** Clock in ms. Default `performance.now`. */
  now?: () => number;
}

/**
 * Progress of `jobhook send --count N` on stderr, like autocannon: while it runs, a line with the
 * deliveries done (of the total), in flight, errors (non-2xx answers and failures) and the current
 * rate; at the end the {@link latencySummary}. Mode `off` counts nothing and writes nothing.
 */
export function createSendProgress(options: SendProgressOptions): SendProgress {
  const { stderr, mode, total } = options;
  const now = options.now ?? (() => performance.now());
  if (mode === 'off') return { started() {}, finished() {}, end: async () => {} };

  const latencies: number[] = [];
  let inFlight = 0;
  let errors = 0;
  const startedAt = now();
  let tickAt = startedAt;
  let doneAtTick = 0;
  let rate = 0;

  const line = (): string =>
    `jobhook send: ${latencies.length}/${total} done · ${inFlight} in flight · ${errors} errors · ${rate.toFixed(0)}/s`;
  const tick = (): void => {
    const t = now();
    // The current rate: deliveries answered since the last update.
    if (t > tickAt) rate = ((latencies.length - doneAtTick) / (t - tickAt)) * 1000;
    tickAt = t;
    doneAtTick = latencies.length;
    // Progress is best effort: a full stderr drops an update rather than hold the run.
    stderr.write(mode === 'tty' ? `\r\u001b[2K${line()}` : `${line()}\n`);
  };
  const timer = setInterval(tick, mode === 'tty' ? TTY_INTERVAL_MS : LINES_INTERVAL_MS);
  timer.unref();

  return {
    started() {
      inFlight++;
    },
    finished(latencyMs, ok) {
      inFlight--;
      latencies.push(latencyMs);
      if (!ok) errors++;
    },
    async end() {
      clearInterval(timer);
      const clear = mode === 'tty' ? '\r\u001b[2K' : '';
      await new Promise<void>((resolve) =>
        stderr.write(`${clear}${latencySummary(latencies, errors, now() - startedAt)}`, () => resolve()),
      );
    },
  };
}

/** `send`'s flags of the progress line (parseArgs options). */
export const PROGRESS_OPTIONS = {
  progress: { type: 'boolean' },
  'no-progress': { type: 'boolean' },
} as const;

/** The help rows of those flags. */
export const PROGRESS_FLAG_ROWS: readonly (readonly [string, string])[] = [
  [
    '--progress',
    'a progress line (done, in flight, errors, rate) and a latency summary on stderr even when it is not a terminal (a line a second)',
  ],
  ['--no-progress', 'none, even on a terminal (by default they show when stderr is a terminal)'],
];
