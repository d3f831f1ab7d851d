import type { JobhookError } from '../errors.js';

/**
 * How much of a body to read, as an admission gives it (`receiver.precheck(head).admission`): at
 * most `maxBytes`, each chunk charged as it arrives (`charge`), stopping at its deadline
 * (`onDeadline`, else `signal`), and held to `declaredBytes` (the `Content-Length` the precheck
 * read) without reading the header again.
 */
export interface BodyLimit {
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  /** Preferred to `signal` when given: the same deadline without an AbortSignal (see `Admission.onDeadline`). */
  onDeadline?(listener: (reason: unknown) => void): () => void;
  /**
   * The `Content-Length` the precheck read: `readNodeBody` holds the stream to it (400 for more or
   * fewer bytes). `readCappedBody` needs none: an admission's `maxBytes` is that length already.
   */
  readonly declaredBytes?: number | undefined;
  /** Charges a chunk just read (see `Admission.charge`): an error stops the read and is thrown. */
  charge?(bytes: number): JobhookError | undefined;
}

/**
 * Subscribes `stop` to the limit's deadline, or to `signal`: the unsubscribe. `stop` may be called
 * at once, when the deadline has passed already.
 * @internal
 */
export function onLimitDeadline(
  limit: BodyLimit | undefined,
  signal: AbortSignal | undefined,
  stop: (reason: unknown) => void,
): () => void {
  if (limit?.onDeadline !== undefined) return limit.onDeadline(stop);
  const deadline = limit === undefined ? signal : limit.signal;
  if (deadline === undefined) return () => {};
  if (deadline.aborted) {
    stop(deadline.reason);
    return () => {};
  }
  const onAbort = (): void => stop(deadline.reason);
  deadline.addEventListener('abort', onAbort, { once: true });
  return () => deadline.removeEventListener('abort', onAbort);
}
