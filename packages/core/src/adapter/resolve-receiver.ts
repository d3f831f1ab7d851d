import { JobhookError } from '../errors.js';
import { createReceiver, type Receiver } from '../receiver/create-receiver.js';
import type { ReceiverOptions } from '../receiver/receiver-options.js';
import { adapterView } from '../receiver/adapter-view.js';

/** What every adapter factory takes: a receiver you made, or the options to make one. */
export type ReceiverOrOptions = Receiver | ReceiverOptions;

/**
 * The receiver an adapter runs: the one given, or one created from options (checked now, so a
 * configuration mistake fails at startup with the adapter's name in the message).
 */
export function resolveReceiver(input: ReceiverOrOptions, adapter: string): Receiver {
  if (typeof input !== 'object' || input === null) {
    throw new JobhookError('ERR_OPTION_INVALID', `${adapter}: expected a receiver or receiver options, got ${String(input)}`);
  }
  try {
    if (typeof (input as Partial<Receiver>).handle === 'function') {
      adapterView(input as Receiver); // checked now: an adapter needs its view
      return input as Receiver;
    }
    return createReceiver(input as ReceiverOptions);
  } catch (err) {
    if (err instanceof JobhookError) throw new JobhookError(err.code, `${adapter}: ${err.message}`, { cause: err });
    throw err;
  }
}
