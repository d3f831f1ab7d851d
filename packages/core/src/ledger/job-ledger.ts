/**
 * One job the app submitted with a `webhook_receiver` and has not handled yet. It is written
 * (pending, without a job id) before the submit request, and completed with the job id when the
 * service answers, so a crash between the two leaves an entry to report rather than nothing.
 */
export interface LedgerEntry {
  /** The submission key given to {@link JobLedger.begin}: known before the service answers. */
  readonly key: string;
  /**
   * The job id (lower case, as the receiver keys jobs), once {@link JobLedger.attach} ran; `null` for
   * a submission whose answer never came (the process died, or the request failed without saying
   * whether the job was created). Such an entry cannot be polled.
   */
  readonly jobId: string | null;
  /** When `begin` wrote it, ms since the epoch (the ledger's clock). */
  readonly createdAt: number;
  /** When the entry is due for a poll next (its result deadline at first), ms since the epoch. */
  readonly dueAt: number;
  /** How many times a reconciler has rescheduled it (polls that found no final result, failures). */
  readonly attempts: number;
}

/** An entry leased to one reconciler by {@link JobLedger.lease}: `token` fences its later writes. */
export interface LeasedEntry extends LedgerEntry {
  /** Proof of the lease, for `reschedule` and `abandon`. */
  readonly token: string;
}

/** How many entries a ledger holds (for the outstanding-jobs gauge). */
export interface LedgerCounts {
  /** Entries with a job id: polled once due. */
  readonly attached: number;
  /** Entries still without a job id. */
  readonly unattached: number;
}

/**
 * The expected-jobs ledger: which jobs the app submitted with a `webhook_receiver` and has not yet
 * handled, and when each is due for a poll. The client writes it around each submission
 * (`begin` before the request, `attach` when the job id comes back); the receiver settles a job once
 * it is handled or found handled already (by webhook or poll); a reconciler leases due entries,
 * polls the service for each, and reschedules or abandons them.
 *
 * Keys: the submission key is the app's own (a random id per submission, or the nonce of a
 * recipient tag); job ids are kept in lower case, as the receiver keys jobs.
 *
 * Times are ms since the epoch on the ledger's clock (`clock` option of each implementation); several
 * instances sharing a ledger should have clocks within a few seconds of each other (leases and
 * deadlines are compared with them).
 */
export interface JobLedger {
  /**
   * Writes a pending entry without a job id, due at `dueAt` (its result deadline), before the
   * submit request. A key already present is left as it is (a retried `begin` is harmless).
   * @throws JobhookError `ERR_STORE_UNAVAILABLE` when the ledger cannot be written: do not submit then.
   */
  begin(key: string, options: { dueAt: number }): Promise<void>;
  /**
   * Completes the entry of `key` with the job id the service answered; `dueAt`, when given, replaces
   * its due time. Writes the entry when it is missing (a reconciler aged it out meanwhile), so a late
   * answer is never lost.
   */
  attach(key: string, jobId: string, options?: { dueAt?: number }): Promise<void>;
  /** Removes the entry of `key`: the submission failed and no job was created (a 4xx answer). */
  discard(key: string): Promise<boolean>;
  /**
   * Removes the entry of `jobId` (any case): its result was handled, or found handled already. True
   * when there was one. Settling a job the ledger does not hold changes nothing.
   */
  settle(jobId: string): Promise<boolean>;
  /**
   * Leases up to `limit` entries due by now (attached or not), oldest due first, for `leaseMs`: the
   * lease moves their due time to `now + leaseMs`, so no other caller gets them meanwhile (one
   * poller per job across instances), and a caller that dies leaves them due again when it ends.
   */
  lease(options: { limit: number; leaseMs: number }): Promise<LeasedEntry[]>;
  /**
   * Ends a lease with the entry due again at `dueAt`, one more attempt counted. False (nothing
   * changed) when `token` is not the entry's current lease, or the entry is gone (settled).
   */
  reschedule(key: string, token: string, options: { dueAt: number }): Promise<boolean>;
  /** Removes a leased entry given up on (its result will not be fetched). False when `token` is stale or it is gone. */
  abandon(key: string, token: string): Promise<boolean>;
  /** How many entries the ledger holds. */
  count(): Promise<LedgerCounts>;
  /** Releases what the ledger owns (connections it opened). Idempotent. */
  close(): Promise<void>;
}

/** True when `value` has every method of {@link JobLedger}: the check the reconciler makes of its `ledger` option. */
export function isJobLedger(value: unknown): value is JobLedger {
  if (typeof value !== 'object' || value === null) return false;
  const methods = ['begin', 'attach', 'discard', 'settle', 'lease', 'reschedule', 'abandon', 'count', 'close'] as const;
  return methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}
