/**
 * @jobhook/core/testing: sign events with a throwaway key, so you test your own webhook handler
 * (through `receiver.handle` or over HTTP) without the reference sender.
 *
 * @example
 * ```ts
 * import { createTestKeyPair, buildSignedRequest } from '@jobhook/core/testing';
 * const keys = createTestKeyPair();
 * const receiver = createReceiver({ publicKeys: keys.publicKeyPem, onEvent });
 * const res = await receiver.handle(buildSignedRequest({ status: 'success' }, { privateKey: keys.privateKey }));
 * ```
 * @packageDocumentation
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import type { CanonicalProfile } from '../canonical/profiles.js';
import type { AsyncJobCompletedEvent } from '../events/async-job-event.js';
import type { WebhookHeaderNames } from '../signature/headers.js';
import { signPayload, type PrivateKeyInput, type SignedPayload } from '../signature/sign.js';
import type { BodyStyle } from '../signature/signature-option-checks.js';

/** A throwaway RSA key pair. */
export interface TestKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The public key as the service publishes it (PKCS#1 PEM). */
  publicKeyPem: string;
  /** The private key as PKCS#8 PEM. */
  privateKeyPem: string;
}

const pairs = new Map<number, TestKeyPair>();

/**
 * A key pair for tests, generated once per process and size (RSA key generation takes tens of ms).
 * @param bits modulus length. Default 2048.
 */
export function createTestKeyPair(bits = 2048): TestKeyPair {
  let pair = pairs.get(bits);
  if (pair === undefined) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
    pair = {
      privateKey,
      publicKey,
      publicKeyPem: publicKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    pairs.set(bits, pair);
  }
  return pair;
}

/** Fields to override in a test event; `status` picks the branch (`output` or `error`). */
export type TestEventOverrides = Partial<Record<keyof AsyncJobCompletedEvent | (string & {}), unknown>> & {
  status?: 'success' | 'fail';
};

/**
 * A valid `async_job_completed` event (spec §6.2) with a fresh `job_id`: `success` with a small
 * OCR-like `output` by default, or `fail` with `error: { message, error_code }`. Overrides win;
 * an override set to `undefined` removes the field.
 */
export function buildTestEvent(overrides: TestEventOverrides = {}): AsyncJobCompletedEvent {
  const status = overrides.status ?? 'success';
  const now = new Date();
  const base: Record<string, unknown> = {
    event: 'async_job_completed',
    job_id: randomUUID(),
    status,
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'amazon',
    model: null,
    created_at: new Date(now.getTime() - 1500).toISOString().replace('Z', '+00:00'),
    finished_at: now.toISOString().replace('Z', '+00:00'),
    ...(status === 'success'
      ? { output: { raw_text: 'Hello, world', pages: 1 } }
      : { error: { message: 'Provider returned an error', error_code: 'provider_error' } }),
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete base[key];
    else base[key] = value;
  }
  return base as AsyncJobCompletedEvent;
}

/** Options of {@link signTestEvent} and {@link buildSignedRequest}. */
export interface SignTestEventOptions {
  /** Signing key. Default `createTestKeyPair().privateKey`. */
  privateKey?: PrivateKeyInput;
  /** Canonical profile to sign. Default `python`. */
  profile?: CanonicalProfile;
  /** Body layout. Default `python` (as Python's HTTP clients send JSON). */
  bodyStyle?: BodyStyle;
  /** Header names. Default the spec's. */
  headerNames?: Partial<WebhookHeaderNames>;
}

/**
 * Signs an event (built with {@link buildTestEvent} from overrides, or given whole) as the service does.
 */
export function signTestEvent(
  eventOrOverrides: AsyncJobCompletedEvent | TestEventOverrides = {},
  options: SignTestEventOptions = {},
): SignedPayload & { event: AsyncJobCompletedEvent } {
  const event =
    typeof eventOrOverrides['job_id'] === 'string' && eventOrOverrides['event'] === 'async_job_completed'
      ? (eventOrOverrides as AsyncJobCompletedEvent)
      : buildTestEvent(eventOrOverrides as TestEventOverrides);
  const signed = signPayload(event, options.privateKey ?? createTestKeyPair().privateKey, {
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(options.bodyStyle === undefined ? {} : { bodyStyle: options.bodyStyle }),
    ...(options.headerNames === undefined ? {} : { headerNames: options.headerNames }),
  });
  return { ...signed, event };
}

/** A signed webhook request: what `receiver.handle` takes, and what `fetch` needs (`method`, `headers`, `body`). */
export interface SignedTestRequest {
  method: 'POST';
  /** Lower-case header names, as Node gives them. */
  headers: Record<string, string>;
  rawBody: Buffer;
  /** The same bytes, for `fetch(url, request)`. */
  body: Buffer;
  event: AsyncJobCompletedEvent;
  signature: string;
}

/** A signed request for `receiver.handle(...)` or `fetch(url, request)`. */
export function buildSignedRequest(
  eventOrOverrides: AsyncJobCompletedEvent | TestEventOverrides = {},
  options: SignTestEventOptions = {},
): SignedTestRequest {
  const signed = signTestEvent(eventOrOverrides, options);
  const headers: Record<string, string> = { 'user-agent': 'jobhook-test' };
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value;
  return { method: 'POST', headers, rawBody: signed.body, body: signed.body, event: signed.event, signature: signed.signature };
}

export { BREAK_VARIANTS, breakDelivery, type BreakCause, type BreakOptions, type BrokenDelivery } from './break-delivery.js';
export { createFakeClock, rejectionCode, type ConformanceMatchers, type ConformanceTestApi, type FakeClock } from './conformance-api.js';
export { describeStoreConformance, type StoreConformanceOptions } from './store-conformance.js';
export { describeLedgerConformance } from './ledger-conformance.js';
export { deliverRecording, loadRecording } from './recordings.js';
export type { Recording, RecordingOutcome, ReplayAnswer } from '../diagnosis/recording-file.js';
