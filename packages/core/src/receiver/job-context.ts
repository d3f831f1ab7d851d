import type { CanonicalProfile } from '../canonical/profiles.js';
import type { LosslessJsonValue } from '../canonical/to-value.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { Logger } from '../log/logger.js';
import type { HandlerContext } from './receiver-options.js';

/** What a context needs of the verification: the signed payload with its numbers as signed. */
interface LosslessSource {
  losslessPayload(): LosslessJsonValue;
}

/**
 * The handler's context: one class, so every context has the same shape (no per-request getters
 * defined on the object). `signal` is made only if the handler reads it (an AbortController per
 * request was a measurable part of the pipeline's cost), and aborted with the first reason given to
 * {@link stopJob}, whether the handler took the signal before or after.
 * @internal
 */
export class JobContext implements HandlerContext<unknown> {
  #abort: AbortController | undefined = undefined;
  #stopReason: Error | undefined = undefined;
  readonly #verified: LosslessSource;

  constructor(
    readonly jobId: string,
    readonly source: 'webhook' | 'poll',
    readonly profile: CanonicalProfile | null,
    readonly keyId: string | null,
    readonly headers: RequestHeaders,
    readonly log: Logger,
    verified: LosslessSource,
    /** The store's transaction, set when it opens one (`TransactionalStore`); `undefined` otherwise. */
    public db: unknown = undefined,
  ) {
    this.#verified = verified;
  }

  losslessPayload(): LosslessJsonValue {
    return this.#verified.losslessPayload();
  }

  get signal(): AbortSignal {
    this.#abort ??= new AbortController();
    if (this.#stopReason !== undefined && !this.#abort.signal.aborted) this.#abort.abort(this.#stopReason);
    return this.#abort.signal;
  }

  /** Aborts `ctx.signal` (now, or when the handler first reads it) with the first reason given. */
  static stop(context: JobContext, reason: Error): void {
    context.#stopReason ??= reason;
    if (context.#abort !== undefined && !context.#abort.signal.aborted) context.#abort.abort(context.#stopReason);
  }
}

/** Why a handler's signal aborts after `handlerTimeoutMs`. @internal */
export function timeoutReason(ms: number): Error {
  return new Error(`handler exceeded ${ms} ms`);
}
