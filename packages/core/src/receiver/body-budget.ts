import { optionError } from '../internal/option-checks.js';

/**
 * Bytes of request bodies being read at once, shared by the receivers given it. A body is charged
 * for its bytes as they arrive (core's readers charge each chunk through the admission), never for
 * what its `Content-Length` announces: a request that announces 1 MiB and sends nothing holds
 * nothing. The charge is given back once the body is read and verified, refused or timed out. A
 * chunk that finds the budget spent stops its body (503 `ERR_RECEIVER_BUSY` with `Retry-After`, the
 * connection closed), so what unauthenticated and replayed bodies hold in memory has one ceiling,
 * however many receivers, routes or adapters the process runs.
 *
 * Under pressure no single client takes the rest: once more than {@link BODY_BUDGET_PRESSURE} of the
 * capacity is charged, a chunk is charged only while its client (an address, IPv6 grouped by /64;
 * see `RequestHead.clientAddress`) holds less than {@link BODY_BUDGET_CLIENT_SHARE} of the capacity
 * in its OTHER bodies: a client goes on with one body, not with many. The last quarter is kept for
 * clients that read one body at a time, such as the service's own deliveries. A client that is
 * alone may always finish its body, so one body of `maxBodyBytes` is read on an idle receiver
 * whatever the capacity (at least `maxBodyBytes`).
 *
 * By default every receiver of the process shares one budget of {@link DEFAULT_MAX_BODY_BYTES_IN_FLIGHT}
 * ({@link processBodyBudget}); `maxBodyBytesInFlight` gives a receiver a budget of its own (a number)
 * or one you share between chosen receivers (a budget from {@link createBodyBudget}).
 */
export interface BodyBudget {
  /** Bytes that may be charged at once. */
  readonly capacity: number;
  /** Bytes charged right now. */
  readonly reserved: number;
  /**
   * Charges `bytes` to `client` (a share key; `''` when the address is unknown) for a body that holds
   * `ownBytes` already. False, nothing charged, when that would pass the capacity, or when under
   * pressure the client's other bodies hold its share.
   */
  tryReserve(bytes: number, client?: string, ownBytes?: number): boolean;
  /** Gives back bytes charged to `client` (the same total `tryReserve` accepted for it). */
  release(bytes: number, client?: string): void;
  /** Bytes charged to `client` right now. */
  reservedBy(client: string): number;
}

/**
 * Default capacity of the process's shared budget: 64 MiB, 64 bodies of the default 1 MiB limit read
 * at once. Real deliveries are far smaller and read in milliseconds; only held uploads fill it.
 */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

/** Share of the capacity past which the budget is under pressure and {@link BODY_BUDGET_CLIENT_SHARE} applies: 3/4. */
export const BODY_BUDGET_PRESSURE = 0.75;

/**
 * Share of the capacity a client's other bodies may hold for one of its bodies to go on while the
 * budget is under pressure: 1/256 (256 KiB of the default 64 MiB), so that each address holds about
 * one body at a time there and the last quarter takes a dozen addresses to fill.
 */
export const BODY_BUDGET_CLIENT_SHARE = 1 / 256;

class SharedBodyBudget implements BodyBudget {
  reserved = 0;
  readonly #byClient = new Map<string, number>();
  readonly #pressure: number;
  readonly #share: number;

  constructor(readonly capacity: number) {
    this.#pressure = Math.floor(capacity * BODY_BUDGET_PRESSURE);
    this.#share = Math.max(1, Math.floor(capacity * BODY_BUDGET_CLIENT_SHARE));
  }

  tryReserve(bytes: number, client = '', ownBytes = 0): boolean {
    if (bytes <= 0) return true;
    const after = this.reserved + bytes;
    if (after > this.capacity) return false;
    const held = this.#byClient.get(client) ?? 0;
    if (after > this.#pressure && held - ownBytes >= this.#share) return false;
    this.reserved = after;
    this.#byClient.set(client, held + bytes);
    return true;
  }

  release(bytes: number, client = ''): void {
    if (bytes <= 0) return;
    this.reserved -= bytes;
    const left = (this.#byClient.get(client) ?? 0) - bytes;
    if (left > 0) this.#byClient.set(client, left);
    else this.#byClient.delete(client);
  }

  reservedBy(client: string): number {
    return this.#byClient.get(client) ?? 0;
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

// Process-wide on purpose: the memory bodies hold is the process's, whichever receiver reads them.
let processBudget: BodyBudget | undefined;

/**
 * The budget every receiver of the process shares unless given `maxBodyBytesInFlight`:
 * {@link DEFAULT_MAX_BODY_BYTES_IN_FLIGHT} bytes, made on first use.
 */
export function processBodyBudget(): BodyBudget {
  processBudget ??= new SharedBodyBudget(DEFAULT_MAX_BODY_BYTES_IN_FLIGHT);
  return processBudget;
}
