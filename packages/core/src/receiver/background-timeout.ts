/**
 * `setTimeout` that does not keep the process alive where the runtime can say so (Node.js, Bun,
 * Deno: `unref`). Workers' web timers (a compatibility date before 2026-03-01 without
 * `enable_nodejs_global_timers`) return a number with no `unref`, and have no process to keep alive.
 * The timer itself is returned either way, so `clearTimeout` always reaches it.
 */
export function backgroundTimeout(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(callback, ms);
  (timer as { unref?: () => unknown }).unref?.();
  return timer;
}
