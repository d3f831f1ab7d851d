/** Window of {@link createRejectionLogLimit}: one line per error code per minute. */
export const REJECTION_LOG_WINDOW_MS = 60_000;

/**
 * Decides which refusals reach the log: the first of each error code in a window, carrying how many
 * of that code the previous window held back. Anyone can send requests that are refused before
 * authentication, so one line per request would let them fill the disk (and hide the errors that
 * matter); one line per code per minute still shows an attack, and the counters
 * (`receiver.stats()`, metrics) count every request. `now` is a monotonic clock (default
 * `performance.now`): a wall clock stepped back would hold every line until it caught up.
 * @internal
 */
export function createRejectionLogLimit(now: () => number = () => performance.now()): (code: string) => number | undefined {
  const windows = new Map<string, { start: number; held: number }>();
  return (code) => {
    const t = now();
    const w = windows.get(code);
    if (w === undefined || t - w.start >= REJECTION_LOG_WINDOW_MS) {
      const suppressed = w?.held ?? 0;
      windows.set(code, { start: t, held: 0 });
      return suppressed;
    }
    w.held++;
    return undefined;
  };
}
