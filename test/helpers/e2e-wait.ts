// Event-driven waits for the end-to-end tests: check a condition again and again until a deadline,
// instead of sleeping a fixed time that is too long on an idle machine and too short on a loaded one.

/** Options of {@link waitUntil}. */
export interface WaitUntilOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** Pause between checks. Default 25. */
  intervalMs?: number;
  /** Describes what was awaited (and what was last seen) in the timeout error. */
  what: () => string;
}

/**
 * Calls `check` until it returns something other than `undefined`, and returns that; throws after
 * `timeoutMs` with `what()` in the message.
 *
 * @example
 * ```ts
 * const d = await waitUntil(async () => { const d = await api.deliveries(id); return d.delivery === 'pending' ? undefined : d; },
 *   { timeoutMs: 10_000, what: () => `job ${id} delivered` });
 * ```
 */
export async function waitUntil<T>(check: () => Promise<T | undefined> | T | undefined, options: WaitUntilOptions): Promise<T> {
  const { timeoutMs, intervalMs = 25, what } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`waitUntil: gave up after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
