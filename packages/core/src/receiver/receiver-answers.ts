import type { CanonicalProfile } from '../canonical/profiles.js';
import { JobhookError, type ErrorCode } from '../errors.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { explainRefusal, type RefusalCauseFields } from '../diagnosis/explain-refusal.js';
import type { FailedRequest } from '../diagnosis/failure-capture.js';
import { jsonHeaders } from '../http/json-answer.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Logger } from '../log/logger.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import type { OutcomeLog } from './outcome-log.js';
import type { OutcomeKind, ReceiverOutcome, ReceiverStats } from './receiver-outcome.js';
import type { ReceiverResponse } from './receiver-types.js';

/** What the answer of a verified event says about it (absent before the signature verified). @internal */
export interface VerifiedDetail {
  jobId: string;
  eventStatus: string;
  profile: CanonicalProfile;
  keyId: string;
  event: AsyncJobCompletedEvent;
}

/** The counters a receiver keeps, but `bodyBytesInFlight` (its budget's) and `handlersRunning` (its slots'). @internal */
export type AnswerStats = Omit<ReceiverStats, 'bodyBytesInFlight' | 'handlersRunning'>;

/** What answers need of their receiver. @internal */
export interface AnswerSetup {
  stats: AnswerStats;
  logOutcome: OutcomeLog;
  onOutcome: ((outcome: ReceiverOutcome) => void) | undefined;
  log: Logger;
  /** Saves a refused request (`captureFailures`), or undefined. */
  captureFailure: ((request: FailedRequest, refusal: { status: number; code: string; cause: RefusalCauseFields }) => void) | undefined;
  headerNames: WebhookHeaderNames;
  keyRing: KeyRing;
}

/**
 * The receiver's answers: each builds the outcome (counted, logged, handed to `onOutcome`) and the
 * response to write, with `Content-Type: application/json` and any extra headers.
 * @internal
 */
export class ReceiverAnswers {
  constructor(private readonly setup: AnswerSetup) {}

  /** 200 for a job handled now (`duplicate: false`) or before (`true`). */
  ok(started: number, kind: 'handled' | 'duplicate', detail: VerifiedDetail): ReceiverResponse {
    // A job id that passed validateEvent (a UUID, in lower case) needs no escaping.
    const body = `{"ok":true,"job_id":"${detail.jobId}","duplicate":${kind === 'duplicate'}}`;
    return this.answer({ started, kind, body, detail });
  }

  /** The answer carrying `error` (its status, `{"error":{code,message}}`), counted as a refusal when `kind` is `rejected`. */
  error(
    started: number,
    kind: OutcomeKind,
    error: JobhookError,
    detail?: VerifiedDetail,
    extraHeaders?: Readonly<Record<string, string>>,
  ): ReceiverResponse {
    if (kind === 'rejected') this.countRejected(error.code);
    return this.answer({ started, kind, error, detail, extraHeaders });
  }

  /** A refusal of its own making, before anything is verified. */
  reject(started: number, code: ErrorCode, message: string, extraHeaders?: Readonly<Record<string, string>>): ReceiverResponse {
    return this.error(started, 'rejected', new JobhookError(code, message), undefined, extraHeaders);
  }

  /**
   * A refusal of the verify path, explained by the diagnosis (its one hook, called only here): the
   * answer's message says why, the log line carries the cheap cause, and `captureFailures` may save
   * the request. The explanation keeps the refusal's code.
   */
  verifyRefusal(started: number, refusal: JobhookError, request: FailedRequest): ReceiverResponse {
    const { headerNames, keyRing, captureFailure } = this.setup;
    this.countRejected(refusal.code);
    const explained = explainRefusal(refusal, request, headerNames, keyRing);
    const error = explained?.error ?? refusal;
    const cause = explained?.cause;
    if (cause !== undefined && captureFailure !== undefined) captureFailure(request, { status: error.status, code: error.code, cause });
    return this.answer({ started, kind: 'rejected', error, cause });
  }

  /** A bug or a non-jobhook throw (a bad headers object, ...): answered 500 rather than crashing the server. */
  internal(err: unknown): ReceiverResponse {
    return this.error(
      performance.now(),
      'rejected',
      new JobhookError('ERR_INTERNAL', 'internal error in the webhook receiver', { cause: err }),
    );
  }

  private countRejected(code: ErrorCode): void {
    const { rejected } = this.setup.stats;
    rejected[code] = (rejected[code] ?? 0) + 1;
  }

  private answer(parts: AnswerParts): ReceiverResponse {
    const { started, kind, detail, error } = parts;
    const status = error === undefined ? 200 : error.status;
    const code = error?.code;
    const body = parts.error === undefined ? parts.body : JSON.stringify(parts.error.toJSON());
    const { logOutcome, onOutcome, log } = this.setup;
    const durationMs = performance.now() - started;
    let outcome: ReceiverOutcome;
    if (detail === undefined) {
      outcome = code === undefined ? { kind, status, durationMs } : { kind, status, code, durationMs };
    } else {
      const { jobId, eventStatus, profile, keyId } = detail;
      outcome =
        code === undefined
          ? { kind, status, jobId, eventStatus, profile, keyId, durationMs }
          : { kind, status, code, jobId, eventStatus, profile, keyId, durationMs };
    }
    logOutcome(outcome, error, parts.cause);
    if (onOutcome !== undefined) {
      try {
        onOutcome(outcome);
      } catch (err) {
        log.error({ err }, 'jobhook: onOutcome threw');
      }
    }
    const response: ReceiverResponse = { status, headers: jsonHeaders(parts.extraHeaders), body, outcome };
    if (detail !== undefined) response.event = detail.event;
    return response;
  }
}

/**
 * One answer, as {@link ReceiverAnswers} builds it: a 200 with its body, or an error (its status and
 * `{"error":{code,message}}`); what is absent is left out.
 */
type AnswerParts = {
  /** When the request came (`performance.now()`), for the outcome's `durationMs`. */
  readonly started: number;
  readonly kind: OutcomeKind;
  /** What the answer says about a verified event. */
  readonly detail?: VerifiedDetail | undefined;
  /** Headers besides `Content-Type` (`Retry-After`, `Allow`). */
  readonly extraHeaders?: Readonly<Record<string, string>> | undefined;
} & (
  | { readonly body: string; readonly error?: undefined; readonly cause?: undefined }
  | {
      readonly error: JobhookError;
      /** A verify-path refusal's cheap cause, for the log line. */
      readonly cause?: RefusalCauseFields | undefined;
    }
);
