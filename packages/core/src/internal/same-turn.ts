// The same-turn fast path, in one module. On the memory store, a delivery whose handler returns no
// promise is verified, claimed, handled, completed and answered in the turn `receiver.handle` was
// called in: no timer, and no promise but the one `handle` returns (a measured part of its speed).
// And `constructEvent` hands a verifier the signature it decoded from the headers, not its hex
// again. Two things make that possible, both here:
//
// - Steps that end in this turn when they can (SameTurn): a step of the receive path returns its
//   value, or a promise of it only when something is pending (a store's round trip, a handler's or
//   a rule's promise). afterTurn chains the next step either way, so no stage tests for a promise
//   itself; isPending is that test, for a stage that does different work when one is pending (a
//   handler's heartbeat and timeout).
// - The inner side of some objects core makes (SameTurnSides): the memory store's claims without
//   their promises and argument checks (store/store-claims.ts), a `createVerifier` verifier's step
//   for a decoded signature (signature/verifier.ts). Only core's own code reaches a side, which
//   checked its arguments once, at construction; it finds it by the object itself, so a copy
//   (`{ ...store, claim }`), a wrapper or an object of your own has none and is called through its
//   public methods. The sides' shapes are typed beside their objects: this module sits below the
//   store and the verifier, which offer their sides to it.

/** A step's value in this turn, or the promise of it when something is pending. @internal */
export type SameTurn<T> = T | Promise<T>;

/** True for a promise or any other thenable (a handler's, a store's of your own): work still pending. @internal */
export function isPending(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * `next(value)`: in this turn when `value` is no promise, else once it fulfils; `failed(reason)` when
 * it rejects (without `failed`, the rejection is passed on). A throw of `next` in this turn is thrown.
 * @internal
 */
export function afterTurn<T, R>(
  value: T | PromiseLike<T>,
  next: (value: T) => SameTurn<R>,
  failed?: (reason: unknown) => SameTurn<R>,
): SameTurn<R> {
  return isPending(value) ? Promise.resolve(value).then(next, failed) : next(value as T);
}

/**
 * The inner sides of the objects of one kind core makes, each found by its object: the factory
 * offers the side as it makes the object, core's code asks for it. Keyed weakly (a side lives as long
 * as its object) and by identity (a copy or a wrapper has none).
 * @internal
 */
export class SameTurnSides<Owner extends object, Side extends object> {
  readonly #sides = new WeakMap<Owner, Side>();

  /** Makes `side` the side of `owner`: by the factory that made `owner`, once. */
  offer(owner: Owner, side: Side): void {
    this.#sides.set(owner, side);
  }

  /** The side of `owner`, or undefined for an object this kind's factory did not make. */
  of(owner: Owner): Side | undefined {
    return this.#sides.get(owner);
  }
}
