import { JobhookError } from '../errors.js';
import { afterTurn, type SameTurn } from '../internal/same-turn.js';
import type { ReceiverOutcome } from './receiver-outcome.js';
import type { Precheck, ReceiverRequest, ReceiverResponse, RequestHead } from './receiver-types.js';
import { SPAN_ATTRIBUTES as ATTR, SPAN_NAMES } from '../tracing/span-names.js';
import type { SpanAttributeValueLike, SpanLike, TracerLike } from '../tracing/tracer-like.js';

/** OpenTelemetry's `SpanKind.INTERNAL`: an HTTP instrumentation, if any, owns the request's `SERVER` span. */
const SPAN_KIND_INTERNAL = 0;
/** OpenTelemetry's `SpanStatusCode.ERROR`. Successes stay `UNSET`, as the conventions ask of instrumentations. */
const STATUS_ERROR = 2;
/** The methods OpenTelemetry's HTTP conventions name; any other is `_OTHER` (a span attribute anyone can set). */
const HTTP_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);
/**
 * Outcomes that are this side's failure (the span's status `ERROR`): the handler threw or outran
 * its time, the store failed. A refusal of the request (4xx), a job in flight or every handler slot
 * taken (503s the sender retries) is the receiver working as it should.
 */
const FAILED_KINDS: ReadonlySet<string> = new Set(['handler-failed', 'handler-timeout', 'store-unavailable']);

/**
 * The code a webhook of the same outcome is answered with, for a poll's `jobhook.error.code`: the
 * same outcome reads the same whichever way the result came.
 */
const POLL_CODES: Readonly<Record<string, string>> = {
  'in-flight': 'ERR_JOB_IN_FLIGHT',
  'handler-failed': 'ERR_HANDLER_FAILED',
  'handler-timeout': 'ERR_HANDLER_TIMEOUT',
  'store-unavailable': 'ERR_STORE_UNAVAILABLE',
  'handlers-busy': 'ERR_HANDLERS_BUSY',
};

/** What a polled result's handling answers (`receiver.handlePolled`), as far as its span needs. @internal */
export interface PolledOutcomeLike {
  kind: string;
  jobId?: string;
  error?: unknown;
}

/** A handler run: the receiver's `onSuccess` / `onFail` then `onEvent` of one job. @internal */
type HandlerRun<E, C> = (event: E, context: C) => SameTurn<void>;

/**
 * Wrappers that put the receiver's entry points and its handler run inside spans: identities when
 * there is no tracer, so a receiver without one pays nothing. @internal
 */
export interface DeliveryTracing {
  /** `receiver.handle`: one `jobhook.webhook` span from the request to the answer, the handler inside. */
  handle(inner: (request: ReceiverRequest) => Promise<ReceiverResponse>): (request: ReceiverRequest) => Promise<ReceiverResponse>;
  /**
   * `receiver.precheck`: a refusal gets its span at once; an admission's span runs from the body's
   * arrival (`receive`) to the answer, or is recorded when the body is refused.
   */
  precheck(inner: (head: RequestHead) => Precheck): (head: RequestHead) => Precheck;
  /** The handler run: a `jobhook.handler` span, a child of the delivery's, until the handler settles. */
  handler<E, C extends { jobId: string }>(run: HandlerRun<E, C>): HandlerRun<E, C>;
  /**
   * `receiver.handlePolled`: one `jobhook.poll` span (`jobhook.source` `poll`) around the handling
   * of a polled result, the handler inside.
   */
  polled<J, O extends PolledOutcomeLike>(inner: (job: J) => Promise<O>): (job: J) => Promise<O>;
}

const untraced: DeliveryTracing = {
  handle: (inner) => inner,
  precheck: (inner) => inner,
  handler: (run) => run,
  polled: (inner) => inner,
};

/** The span's `error.type` and `ERROR` status, for a failure of this side. */
function fail(span: SpanLike, errorType: string): void {
  span.setAttribute(ATTR.errorType, errorType);
  span.setStatus({ code: STATUS_ERROR, message: errorType });
}

function set(span: SpanLike, name: string, value: SpanAttributeValueLike | undefined): void {
  if (value !== undefined) span.setAttribute(name, value);
}

/** A request's method, as OpenTelemetry's HTTP conventions write it. */
function methodOf(head: unknown): string {
  const method = (head as { method?: unknown } | null | undefined)?.method;
  if (typeof method !== 'string') return '_OTHER';
  const upper = method.toUpperCase();
  return HTTP_METHODS.has(upper) ? upper : '_OTHER';
}

/** A delivery span's attributes from the receiver's outcome. */
function describeOutcome(span: SpanLike, outcome: ReceiverOutcome): void {
  span.setAttribute(ATTR.outcome, outcome.kind);
  span.setAttribute(ATTR.httpStatus, outcome.status);
  set(span, ATTR.jobId, outcome.jobId);
  set(span, ATTR.jobStatus, outcome.eventStatus);
  set(span, ATTR.profile, outcome.profile);
  set(span, ATTR.keyId, outcome.keyId);
  set(span, ATTR.errorCode, outcome.code);
  // A 500 refusal (ERR_INTERNAL, a body parser mounted first, a late-event rule that threw) is ours too.
  if (FAILED_KINDS.has(outcome.kind) || outcome.status === 500) fail(span, outcome.code ?? outcome.kind);
}

/** `error.type` of a thrown value: its jobhook code, or its class name (`TypeError`), or `_OTHER`. */
function errorType(error: unknown): string {
  if (error instanceof JobhookError) return error.code;
  return error instanceof Error ? error.name : '_OTHER';
}

function describeError(span: SpanLike, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
}

/**
 * The receiver's tracing: spans through `tracer` (an OpenTelemetry `Tracer`), or none at all.
 * @internal
 */
export function createDeliveryTracing(tracer: TracerLike | undefined): DeliveryTracing {
  if (tracer === undefined) return untraced;

  /**
   * `fn` inside a new active span, ended when what it returns settles (at once when that is no
   * promise: a handler that returned without one keeps the pipeline's same-turn path, no timers, no
   * promise); a throw or rejection is recorded and passed on.
   */
  function active<R>(name: string, attributes: Record<string, SpanAttributeValueLike>, fn: (span: SpanLike) => R): R {
    return tracer!.startActiveSpan(name, { kind: SPAN_KIND_INTERNAL, attributes }, (span: SpanLike): R => {
      const failed = (error: unknown): void => {
        describeError(span, error);
        fail(span, errorType(error));
        span.end();
      };
      let result: R;
      try {
        result = fn(span);
      } catch (error) {
        failed(error);
        throw error;
      }
      return afterTurn(
        result,
        (value) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          failed(error);
          throw error;
        },
      ) as R;
    });
  }

  /** A span for an answer given without running anything under it (a refusal before the body step). */
  function record(head: unknown, response: ReceiverResponse): ReceiverResponse {
    tracer!.startActiveSpan(
      SPAN_NAMES.webhook,
      { kind: SPAN_KIND_INTERNAL, attributes: webhookAttributes(head) },
      (span: SpanLike): void => {
        describeOutcome(span, response.outcome);
        span.end();
      },
    );
    return response;
  }

  const webhookAttributes = (head: unknown): Record<string, SpanAttributeValueLike> => ({
    [ATTR.source]: 'webhook',
    [ATTR.httpMethod]: methodOf(head),
  });

  const webhook = (head: unknown, answer: () => Promise<ReceiverResponse>): Promise<ReceiverResponse> =>
    active(SPAN_NAMES.webhook, webhookAttributes(head), (span) =>
      answer().then((response) => {
        describeOutcome(span, response.outcome);
        return response;
      }),
    );

  const traced: DeliveryTracing = {
    handle: (inner) => (request) => webhook(request, () => inner(request)),
    precheck: (inner) => (head) => {
      const result = inner(head);
      if (result.refusal !== undefined) return { refusal: record(head, result.refusal) };
      const { admission } = result;
      return {
        admission: {
          maxBytes: admission.maxBytes,
          declaredBytes: admission.declaredBytes,
          // A getter: the AbortSignal is made only for a reader that asks for it.
          get signal() {
            return admission.signal;
          },
          ...(admission.onDeadline === undefined ? {} : { onDeadline: admission.onDeadline.bind(admission) }),
          ...(admission.charge === undefined ? {} : { charge: admission.charge.bind(admission) }),
          receive: (rawBody) => webhook(head, () => admission.receive(rawBody)),
          refuse: (error) => record(head, admission.refuse(error)),
        },
      };
    },
    handler: (run) => (event, context) => active(SPAN_NAMES.handler, { [ATTR.jobId]: context.jobId }, () => run(event, context)),
    polled: (inner) => (job) => {
      const polledId = (job as { job_id?: unknown } | null | undefined)?.job_id;
      const polledStatus = (job as { status?: unknown } | null | undefined)?.status;
      const attributes: Record<string, SpanAttributeValueLike> = { [ATTR.source]: 'poll' };
      if (typeof polledId === 'string') attributes[ATTR.jobId] = polledId.toLowerCase();
      if (typeof polledStatus === 'string') attributes[ATTR.jobStatus] = polledStatus;
      return active(SPAN_NAMES.poll, attributes, (span) =>
        inner(job).then((outcome) => {
          span.setAttribute(ATTR.outcome, outcome.kind);
          set(span, ATTR.jobId, outcome.jobId);
          const code = POLL_CODES[outcome.kind] ?? (outcome.error instanceof JobhookError ? outcome.error.code : undefined);
          set(span, ATTR.errorCode, code);
          if (FAILED_KINDS.has(outcome.kind)) {
            if (outcome.error !== undefined) describeError(span, outcome.error);
            fail(span, code ?? outcome.kind);
          }
          return outcome;
        }),
      );
    },
  };
  return traced;
}
