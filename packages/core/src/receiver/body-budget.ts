import { optionError } from '../internal/option-checks.js';

/**
 * Bytes of request bodies being read at once, shared by the receivers given it: each admitted body
 * reserves its declared `Content-Length` (or `maxBodyBytes`, when it declares none) before a byte of
 * it is read, and gives it back once it is read and verified, refused or timed out. A body that
 * finds the budget spent is not read at all (503 `ERR_RECEIVER_BUSY` with `Retry-After`), so what
 * unauthenticated and replayed bodies hold in memory has one ceiling, however many receivers, routes
 * or adapters the process runs. A body larger than the whole budget reserves all of it: it is read alone.
 *
 * By default every receiver of the process shares one budget of {@link DEFAULT_MAX_BODY_BYTES_IN_FLIGHT}
 * ({@link processBodyBudget}); `maxBodyBytesInFlight` gives a receiver a budget of its own (a number)
 * or one you share between chosen receivers (a budget from {@link createBodyBudget}).
 */
export interface BodyBudget {
  /** Bytes that may be reserved at once. */
  readonly capacity: number;
  /** Bytes reserved right now. */
  readonly reserved: number;
  /** Reserves `bytes` (at most the capacity); false, nothing reserved, when that would pass the capacity. */
  tryReserve(bytes: number): boolean;
  /** Gives back bytes `tryReserve` reserved (the same number it was given). */
  release(bytes: number): void;
}

/**
 * Default capacity of the process's shared budget: 64 MiB, 64 bodies of the default 1 MiB limit read
 * at once. Real deliveries are far smaller and read in milliseconds; only held uploads fill it.
 */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

class SharedBodyBudget implements BodyBudget {
  reserved = 0;
  constructor(readonly capacity: number) {}

  tryReserve(bytes: number): boolean {
    const share = Math.min(bytes, this.capacity);
    if (this.reserved + share > this.capacity) return false;
    this.reserved += share;
    return true;
  }

  release(bytes: number): void {
    this.reserved -= Math.min(bytes, this.capacity);
  }
}

/**
 * A {@link BodyBudget} of `capacityBytes`, to share between the receivers given it as
 * `maxBodyBytesInFlight`.
 *
 * @example
 * ```ts
 * const budget = createBodyBudget(256 * 1024 * 1024);
 * const orders = createReceiver({ publicKeys, onEvent: saveOrder, maxBodyBytesInFlight: budget });
 * const reports = createReceiver({ publicKeys, onEvent: saveReport, maxBodyBytesInFlight: budget });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` unless `capacityBytes` is a positive whole number.
 */
export function createBodyBudget(capacityBytes: number): BodyBudget {
  if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 1) {
    throw optionError('createBodyBudget', `capacityBytes must be a positive whole number, got ${String(capacityBytes)}`);
  }
  return new SharedBodyBudget(capacityBytes);
}

/** True for what {@link createBodyBudget} returns. @internal */
export function isBodyBudget(value: unknown): value is BodyBudget {
  return value instanceof SharedBodyBudget;
}

let processBudget: BodyBudget | undefined;

/**
 * The budget every receiver of the process shares unless given `maxBodyBytesInFlight`:
 * {@link DEFAULT_MAX_BODY_BYTES_IN_FLIGHT} bytes, made on first use.
 */
export function processBodyBudget(): BodyBudget {
  processBudget ??= new SharedBodyBudget(DEFAULT_MAX_BODY_BYTES_IN_FLIGHT);
  return processBudget;
}
