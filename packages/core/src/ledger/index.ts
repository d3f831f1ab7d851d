/**
 * `@jobhook/core/ledger`: the expected-jobs ledger (which jobs the app submitted with a
 * `webhook_receiver` and has not handled yet) and its in-memory implementation. The Redis ledger is
 * in `@jobhook/core/redis`, the PostgreSQL one in `@jobhook/postgres`; the client writes the ledger
 * around each submission and its reconciler polls what is overdue (`@jobhook/client`).
 * @packageDocumentation
 */
export { isJobLedger, type JobLedger, type LeasedEntry, type LedgerCounts, type LedgerEntry } from './job-ledger.js';
export { MAX_LEASE_LIMIT, MAX_LEDGER_KEY_LENGTH } from './ledger-option-checks.js';
export { createMemoryLedger, type MemoryLedgerOptions } from './memory-ledger.js';
export { RECONCILE_OUTCOME_KINDS, type AbandonReason, type ReconcileOutcome } from './reconcile-outcome.js';
