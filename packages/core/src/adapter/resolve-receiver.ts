import { JobhookError } from '../errors.js';
import { optionError } from '../internal/option-checks.js';
import { createReceiver, type Receiver } from '../receiver/create-receiver.js';
import type { ReceiverOptions } from '../receiver/receiver-options.js';

/** What every adapter factory takes: a receiver you made, or the options to make one. */
export type ReceiverOrOptions = Receiver | ReceiverOptions;

/**
 * The receiver an adapter runs: the one given, or one created from options (checked now, so a
 * configuration mistake fails at startup with the adapter's name in the message).
 */
export function resolveReceiver(input: ReceiverOrOptions, adapter: string): Receiver {
  if (typeof input !== 'object' || input === null) {
    throw optionError(adapter, `expected a receiver or receiver options, got ${String(input)}`);
  }
  const given = input as Partial<Receiver>;
  if (typeof given.handle === 'function' || typeof given.precheck === 'function') {
    // Checked now: an adapter runs `precheck`, then the admission's `receive`.
    if (typeof given.precheck !== 'function' || typeof given.handle !== 'function' || typeof given.stats !== 'function') {
      throw optionError(adapter, 'not a receiver: a Receiver has handle, precheck and stats (make one with createReceiver())');
    }
    return input as Receiver;
  }
  try {
    return createReceiver(input as ReceiverOptions);
  } catch (err) {
    if (err instanceof JobhookError) throw new JobhookError(err.code, `${adapter}: ${err.message}`, { cause: err });
    throw err;
  }
}
