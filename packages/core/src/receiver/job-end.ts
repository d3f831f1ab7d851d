/**
 * How a job's run ended, whichever way it ran (claim → handler → complete | release, or the store's
 * transaction) and whichever path brought it (webhook or poll): the one type the answers read. The
 * store's own answers (`ClaimResult`, `TransactionResult`) are mapped to it by the job
 * stage (job-runner.ts, run-in-transaction.ts), and it to what the caller sees: a response's
 * `ReceiverOutcome` (job-answers.ts) or a `PolledOutcome` (handle-polled.ts).
 * @internal
 */
export type JobEnd =
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'in-flight'; readonly retryAfterMs: number }
  | { readonly kind: 'handlers-busy' };

/** The handler ran and its job is done. @internal */
export const DONE: JobEnd = Object.freeze({ kind: 'done' });
/** The job was done already. @internal */
export const DUPLICATE: JobEnd = Object.freeze({ kind: 'duplicate' });
/** No handler slot was free: nothing claimed. @internal */
export const HANDLERS_BUSY: JobEnd = Object.freeze({ kind: 'handlers-busy' });
