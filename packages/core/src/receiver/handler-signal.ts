/**
 * The handler's `ctx.signal`, made only if the handler reads it (an AbortController per request was
 * a measurable part of the pipeline's cost), and aborted with the first reason given to `stop`,
 * whether the handler took the signal before or after.
 * @internal
 */
export function withLazySignal<C extends object>(base: C): { context: C & { readonly signal: AbortSignal }; stop(reason: Error): void } {
  let abort: AbortController | undefined;
  let stopReason: Error | undefined;
  const context = Object.defineProperty({ ...base }, 'signal', {
    enumerable: true,
    get(): AbortSignal {
      abort ??= new AbortController();
      if (stopReason !== undefined && !abort.signal.aborted) abort.abort(stopReason);
      return abort.signal;
    },
  }) as C & { readonly signal: AbortSignal };
  return {
    context,
    stop(reason: Error): void {
      stopReason ??= reason;
      if (abort !== undefined && !abort.signal.aborted) abort.abort(stopReason);
    },
  };
}

/** Why a handler's signal aborts after `handlerTimeoutMs`. @internal */
export function timeoutReason(ms: number): Error {
  return new Error(`handler exceeded ${ms} ms`);
}
