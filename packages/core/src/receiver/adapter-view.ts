import { JobhookError } from '../errors.js';
import type { Receiver, ReceiverRequest, ReceiverResponse } from './create-receiver.js';

/** A request before its body is read. */
export type RequestHead = Pick<ReceiverRequest, 'method' | 'headers'>;

/**
 * What an adapter needs of a receiver beyond its public API: the body limit, the checks that need no
 * body, and the answer to a request refused before `handle` could run. Not on `Receiver` itself: an
 * application never calls them. Get it with `adapterView(receiver)` from `@jobhook/core/adapter`.
 */
export interface AdapterView {
  /** The receiver's `handle`. */
  handle(request: ReceiverRequest): Promise<ReceiverResponse>;
  /**
   * The checks that need no body (method, content type, hash algorithm, the signature header present,
   * hex and of a configured key's length, a declared `Content-Length` over the limit), to run before
   * reading the body: the refusal to send, or `undefined` to go on and read it. `handle` runs the same
   * checks itself.
   */
  precheck(head: RequestHead): ReceiverResponse | undefined;
  /**
   * The answer for a request refused before `handle` could run (the body reader hit the size limit,
   * the client aborted, ...), counted and logged like any rejection.
   */
  reject(error: JobhookError): ReceiverResponse;
  /** The body limit, for adapters that read the body themselves. */
  readonly maxBodyBytes: number;
}

const views = new WeakMap<Receiver, AdapterView>();

/** Registers the adapter view of a receiver (called by `createReceiver`). @internal */
export function registerAdapterView(receiver: Receiver, view: AdapterView): void {
  views.set(receiver, Object.freeze(view));
}

/**
 * The adapter-only methods of a receiver made by `createReceiver`. A receiver made otherwise (your
 * own implementation of `Receiver`) is accepted when it has `precheck`, `reject` and `maxBodyBytes`
 * itself.
 * @throws JobhookError `ERR_OPTION_INVALID` for anything else.
 */
export function adapterView(receiver: Receiver): AdapterView {
  const view = views.get(receiver);
  if (view !== undefined) return view;
  const own = receiver as Partial<AdapterView> | null;
  if (
    typeof own?.handle === 'function' &&
    typeof own.precheck === 'function' &&
    typeof own.reject === 'function' &&
    typeof own.maxBodyBytes === 'number'
  ) {
    return own as AdapterView;
  }
  throw new JobhookError(
    'ERR_OPTION_INVALID',
    'adapterView: not a receiver made by createReceiver() (nor one with handle, precheck, reject and maxBodyBytes of its own)',
  );
}
