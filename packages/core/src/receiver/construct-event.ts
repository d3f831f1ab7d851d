import { JobhookError } from '../errors.js';
import { checkObject, optionError } from '../internal/option-checks.js';
import { resolveBigIntegers, type ParseOptions } from '../canonical/canonical-option-checks.js';
import type { CanonicalProfile } from '../canonical/profiles.js';
import type { BigIntegers } from '../canonical/to-value.js';
import { validateEvent, type AsyncJobCompletedEvent } from '../events/async-job-event.js';
import { isKeyRing, type KeyRing, type PublicKeyInput } from '../keys/key-ring.js';
import type { RequestHeaders } from '../http/request-headers.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { resolveHeaderNames } from '../signature/signature-option-checks.js';
import { readSignatureHeader } from '../diagnosis/explain-refusal.js';
import { bodyBytes, createVerifier, verifyDecodedOf, type Verifier } from '../signature/verifier.js';
import { createRecipientCheck } from '../recipient/recipient-check.js';
import type { RecipientOptions } from '../recipient/recipient-option-checks.js';
import type { Logger } from '../log/logger.js';

/** Options of {@link constructEvent}. */
export interface ConstructEventOptions extends ParseOptions, RecipientOptions {
  /** Header names, as the receiver's `headerNames`. Default the spec's `X-Service-Signature`, `X-Service-Hash-Algorithm`. */
  headerNames?: Partial<WebhookHeaderNames>;
  /**
   * Integers beyond ±(2^53−1) in the event: `'string'` (default) of their exact digits, so
   * `JSON.stringify(event)` works and loses nothing, or `'bigint'`.
   */
  bigIntegers?: BigIntegers;
  /** Canonical profiles tried, in order. Default all four, `python` first. Set on the verifier when passing one. */
  profiles?: readonly CanonicalProfile[];
  /** Where `recipientCheck: 'log'` warns (one line per cause per minute). Default JSON lines at `warn` on stderr. */
  logger?: Logger;
}

/** The options a {@link Verifier} fixed at its creation, which `constructEvent` cannot change per call. */
const VERIFIER_OPTIONS = ['profiles', 'maxBodyBytes', 'maxDepth', 'maxCanonicalBytes'] as const;

/**
 * Verifies one webhook delivery and returns its typed event, in one call: for code that reads the
 * request itself (a serverless function, a queue consumer, a framework without an adapter).
 * The same checks, order and error codes as the receive pipeline: the hash-algorithm header, the
 * signature header (present, hex, of a configured key's length), the signature before the body is
 * parsed, the body's limits, the event's shape.
 *
 * With `recipientSecret` it checks the recipient tag as the receiver does (`recipientCheck`,
 * `recipientUrl`, `recipientTagMaxAgeMs`), and the event's `user_parameters` comes without the tag.
 * It binds no nonce (it has no store): unlike the receiver, it lets a tag copied onto another job
 * through within the tag's age. A refusal's `toJSON()` is the generic `ERR_RECIPIENT_REFUSED` answer.
 *
 * It does **not** deduplicate `job_id` nor refuse old events (replays): the receive pipeline
 * (`createReceiver`) does both; code calling this must do them itself (the service retries, so the
 * same job comes more than once).
 *
 * `publicKeys`: PEM(s), `KeyObject`(s), a `KeyRing`, or a `Verifier` from `createVerifier`. A PEM is
 * parsed on every call; on a hot path pass a `KeyRing` or a `Verifier` (whose `profiles` and limits
 * then apply, and must not be given here again).
 *
 * @example
 * ```ts
 * const event = constructEvent(rawBody, req.headers, process.env.SERVICE_PUBLIC_KEY!);
 * await save(event.job_id, event.status === 'success' ? event.output : undefined);
 * ```
 * @throws JobhookError as the receiver answers: `ERR_HASH_ALGORITHM_UNSUPPORTED`, `ERR_SIGNATURE_*`
 * (401), `ERR_BODY_*` (400/413), `ERR_CANONICAL_TOO_LARGE` (413), `ERR_PAYLOAD_INVALID` (400),
 * `ERR_RECIPIENT_TAG_MISSING` / `_INVALID` / `_EXPIRED` (403, with `recipientSecret`);
 * `ERR_BODY_ALREADY_PARSED` for a body that is not bytes or a string; `ERR_KEY_INVALID` /
 * `ERR_OPTION_INVALID` for bad keys or options.
 */
export function constructEvent(
  body: Uint8Array | ArrayBuffer | string,
  headers: RequestHeaders,
  publicKeys: PublicKeyInput | readonly PublicKeyInput[] | KeyRing | Verifier,
  options: ConstructEventOptions = {},
): AsyncJobCompletedEvent {
  checkObject('constructEvent', 'options', options);
  checkObject('constructEvent', 'headers', headers, 'the request headers (a record or a fetch Headers)');
  const headerNames = resolveHeaderNames(options.headerNames, 'constructEvent');
  const bigIntegers = resolveBigIntegers(options.bigIntegers, 'constructEvent', 'string');
  const bytes = rawBytes(body);
  const verifier = verifierFor(publicKeys, options);
  // The receiver's header refusals, and the signature decoded once: a verifier of createVerifier
  // takes it decoded; one of another making gets it as hex.
  const signature = readSignatureHeader(headers, headerNames, verifier.keyRing);
  const recipientCheck = createRecipientCheck(options, 'constructEvent', options.logger);
  const verifyDecoded = verifyDecodedOf(verifier);
  const { payload } =
    verifyDecoded === undefined
      ? verifier.verify({ body: bytes, signature: signature.toString('hex'), bigIntegers })
      : verifyDecoded(bodyBytes(bytes), signature, bigIntegers);
  const event = validateEvent(payload);
  if (recipientCheck === undefined) return event;
  // The check deletes the tag from the event in place: from a verifier of another making, whose
  // payload it may keep, it gets a copy (the event and its user_parameters) instead.
  const checked = recipientCheck(verifyDecoded === undefined ? ownCopy(event) : event, Date.now());
  if (checked instanceof JobhookError) throw checked;
  return checked;
}

/** The event with its own top-level object and `user_parameters` (the members the recipient check changes). */
function ownCopy(event: AsyncJobCompletedEvent): AsyncJobCompletedEvent {
  const params = event.user_parameters;
  return (params === undefined ? { ...event } : { ...event, user_parameters: { ...params } }) as AsyncJobCompletedEvent;
}

/** True for what {@link createVerifier} returns (a KeyRing, a KeyObject or a PEM has no `verify`). */
function isVerifier(value: unknown): value is Verifier {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Verifier>;
  return typeof candidate.verify === 'function' && isKeyRing(candidate.keyRing);
}

function verifierFor(
  publicKeys: PublicKeyInput | readonly PublicKeyInput[] | KeyRing | Verifier,
  options: ConstructEventOptions,
): Verifier {
  if (!isVerifier(publicKeys)) {
    return createVerifier({ ...options, publicKeys });
  }
  const fixed = VERIFIER_OPTIONS.filter((name) => options[name] !== undefined);
  if (fixed.length > 0) {
    throw optionError(
      'constructEvent',
      `${fixed.join(', ')} ${fixed.length > 1 ? 'are' : 'is'} the verifier's; give ${fixed.length > 1 ? 'them' : 'it'} to createVerifier`,
    );
  }
  return publicKeys;
}

/** The body's bytes; anything else is a body a JSON parser already consumed. */
function rawBytes(body: Uint8Array | ArrayBuffer | string): Uint8Array | string {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
  throw new JobhookError(
    'ERR_BODY_ALREADY_PARSED',
    `constructEvent needs the raw body bytes (Buffer, Uint8Array, ArrayBuffer or string), got ${got}: ` +
      'read the request body as bytes, before any JSON body parser',
  );
}
