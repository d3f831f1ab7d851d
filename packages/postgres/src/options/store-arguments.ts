import { checkInteger, checkJobId, checkMs, checkTagNonce, checkToken, optionError, readOption } from '@jobhook/core/internal';
import { DEFAULT_SWEEP_BATCH } from './postgres-store-options.js';

// The arguments of the store's methods (`postgresStore.claim`, `.complete`, ...): what every store
// takes (the kit's checks), and no NUL in text, which PostgreSQL cannot hold.

const NO_NUL = 'must not contain a NUL character: PostgreSQL text cannot hold one';

/** A job id the table can hold: what every store takes, but no NUL. @internal */
export function checkStoreJobId(where: string, jobId: unknown): asserts jobId is string {
  if (checkJobId(where, jobId).includes('\0')) throw optionError(where, `jobId ${NO_NUL}`);
}

/** The job id and fencing token of `complete`, `release` and `extend`. @internal */
export function checkFencedArgs(where: string, jobId: unknown, token: unknown): asserts token is string {
  checkStoreJobId(where, jobId);
  checkToken(where, token);
}

/** A recipient tag nonce the table can hold: what every store takes, but no NUL. @internal */
export function checkStoreNonce(where: string, nonce: unknown): asserts nonce is string {
  if (checkTagNonce(where, nonce).includes('\0')) throw optionError(where, `nonce ${NO_NUL}`);
}

/** `options[name]`, a whole number of ms (`leaseMs`, `ttlMs`, `doneTtlMs`). @internal */
export function msArgument(where: string, options: unknown, name: string): number {
  return checkMs(where, name, readOption(where, options, name));
}

/** The `limit` of `sweep`, default {@link DEFAULT_SWEEP_BATCH}. @internal */
export function sweepLimit(options: unknown): number {
  const where = 'postgresStore.sweep';
  return checkInteger(where, 'limit', readOption(where, options, 'limit') ?? DEFAULT_SWEEP_BATCH, { min: 1 });
}
