import type { JobhookError } from '../errors.js';
import type { RefusalCauseFields } from '../diagnosis/explain-refusal.js';
import type { Logger } from '../log/logger.js';
import { createRejectionLogLimit } from '../log/rejection-log-limit.js';
import type { ReceiverOutcome } from './receiver-outcome.js';

/** Writes the log line of one answer. @internal */
export type OutcomeLog = (outcome: ReceiverOutcome, error: JobhookError | undefined, cause: RefusalCauseFields | undefined) => void;

/**
 * One log line per answer, at the level a team would page on: handler and store failures as
 * errors with `err`, every one; refusals (`rejected`) at most one line per code per minute,
 * whatever the status, since anyone can cause them (a 500 refusal, `ERR_BODY_ALREADY_PARSED` on a
 * misconfigured route or `ERR_INTERNAL`, still at error with `err`; 4xx as warnings); the rest at info.
 * @internal
 */
export function createOutcomeLog(log: Logger): OutcomeLog {
  const rejectionLogAllowed = createRejectionLogLimit();
  return function logOutcome(outcome, error, cause) {
    const { kind, status } = outcome;
    if (kind === 'handled' || kind === 'duplicate' || kind === 'in-flight') {
      log.info(outcome, `jobhook: webhook ${kind}`);
    } else if (kind === 'handler-timeout') {
      log.warn(outcome, `jobhook: webhook ${kind}; the handler goes on`);
    } else if (kind === 'rejected' || kind === 'handlers-busy') {
      const code = outcome.code ?? kind;
      const suppressed = rejectionLogAllowed(code);
      if (suppressed === undefined) return;
      // Whole: our messages are bounded, and the header values they quote are cut where they are quoted.
      const reason = error?.message ?? '';
      // A 500 refusal is our setup or our bug: its error (the cause's stack, or ours) is what to debug.
      // A 503 one (busy, a body too slow, every handler slot taken) is load: a warning.
      const failed = status === 500;
      const err = failed ? (error?.cause ?? error) : error?.cause;
      const fields = { ...outcome, reason, ...cause, ...(suppressed > 0 ? { suppressed } : {}), ...(err === undefined ? {} : { err }) };
      if (failed) log.error(fields, `jobhook: webhook refused (${code}): ${reason}; one line per code per minute`);
      else log.warn(fields, `jobhook: webhook refused (${code}); one line per code per minute`);
    } else {
      // The cause (the handler's or the store's own error, with its stack) is what to debug; our wrapper says where.
      log.error({ ...outcome, err: error?.cause ?? error }, `jobhook: webhook ${kind}: ${error?.message ?? ''}`);
    }
  };
}
