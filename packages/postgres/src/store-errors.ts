import { JobhookError } from '@jobhook/core';

/** What the store was doing when PostgreSQL failed it. */
export type StoreOperation = 'claim' | 'complete' | 'release' | 'extend' | 'transaction' | 'sweep' | 'migrate';

/** `ERR_STORE_UNAVAILABLE` (503) for a failed database call, with the pg error as `cause`. */
export function unavailable(operation: StoreOperation, cause: unknown, jobId?: string): JobhookError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new JobhookError('ERR_STORE_UNAVAILABLE', `idempotency store unavailable: PostgreSQL ${operation} failed: ${reason}`, {
    cause,
    detail: jobId === undefined ? { operation } : { operation, jobId },
  });
}

/** `ERR_STORE_UNAVAILABLE` for a call on a closed store. */
export function closedError(operation: StoreOperation): JobhookError {
  return new JobhookError('ERR_STORE_UNAVAILABLE', `postgresStore.${operation}: the store is closed`);
}

/**
 * `promise`, or `ERR_STORE_UNAVAILABLE` once `timeoutMs` passed. The statement may still run later:
 * a late claim then holds its job for its lease (deliveries meanwhile answer "in flight"), never
 * runs it twice. The promise always gets a rejection handler, so a late failure is not unhandled.
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, operation: StoreOperation, jobId?: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(unavailable(operation, new Error(`no answer in ${timeoutMs} ms`), jobId)), timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof JobhookError ? err : unavailable(operation, err, jobId));
      },
    );
  });
}
