import { JobhookError } from '@jobhook/core';

/** What the store was doing when PostgreSQL failed it. */
export type StoreOperation =
  | 'claim'
  | 'complete'
  | 'release'
  | 'extend'
  | 'bindTagNonce'
  | 'transaction'
  | 'sweep'
  | 'migrate'
  | LedgerOperation;

/** What the ledger was doing when PostgreSQL failed it. */
export type LedgerOperation = 'begin' | 'attach' | 'discard' | 'settle' | 'lease' | 'reschedule' | 'abandon' | 'count' | 'migrate ledger';

const LEDGER_OPERATIONS: ReadonlySet<string> = new Set<LedgerOperation>([
  'begin',
  'attach',
  'discard',
  'settle',
  'lease',
  'reschedule',
  'abandon',
  'count',
  'migrate ledger',
]);

/** `ERR_STORE_UNAVAILABLE` (503) for a failed database call, with the pg error as `cause`. */
export function unavailable(operation: StoreOperation, cause: unknown, jobId?: string): JobhookError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const what = LEDGER_OPERATIONS.has(operation) ? 'expected-jobs ledger' : 'idempotency store';
  return new JobhookError('ERR_STORE_UNAVAILABLE', `${what} unavailable: PostgreSQL ${operation} failed: ${reason}`, {
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

/** SQLSTATEs that abort a transaction because of what ran in it, not because the store failed. */
const ABORTED_BY_WORK: Readonly<Record<string, string>> = {
  // The handler caught a failed statement of ctx.db and returned: every later statement fails so.
  '25P02': 'a statement of the handler failed inside the transaction; the transaction was aborted',
  '40001': 'the transaction was aborted by a serialization failure',
  '40P01': 'the transaction was aborted by a deadlock with another transaction',
};

/**
 * The handler's failure when the done mark or `COMMIT` failed with an SQLSTATE of
 * {@link ABORTED_BY_WORK}, or of class 23 (a deferred constraint the handler's writes broke): the job rolls back as if the handler had thrown (500, the sender
 * retries) rather than blaming PostgreSQL's availability. Undefined for any other error.
 */
export function abortedByWork(err: unknown): Error | undefined {
  const code = sqlState(err);
  // Class 23 at the done mark or COMMIT: a deferred constraint the handler's writes broke.
  const reason =
    code === undefined
      ? undefined
      : (ABORTED_BY_WORK[code] ?? (code.startsWith('23') ? 'a constraint the handler broke failed at COMMIT' : undefined));
  if (reason === undefined) return undefined;
  return new Error(`${reason} (SQLSTATE ${code}): its writes and the done mark were rolled back`, { cause: err });
}

/** The SQLSTATE of a pg error, or of the error it wraps (query builders wrap pg's). */
export function sqlState(err: unknown): string | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
