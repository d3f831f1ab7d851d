import { optionError } from '@jobhook/core/internal';
import { isJobLedger, type JobLedger } from '@jobhook/core/ledger';

/**
 * Returns `value` when it is a {@link JobLedger} (every method of the contract), else throws naming
 * `ledger`: the one ledger check of `createClient`, `submitWithLedger` and `createReconciler`.
 * @internal
 */
export function checkLedger(where: string, value: unknown): JobLedger {
  if (!isJobLedger(value))
    throw optionError(where, 'ledger must be a JobLedger (createMemoryLedger, createRedisLedger, createPostgresLedger)');
  return value;
}
