import { afterTurn, type SameTurn } from '../internal/same-turn.js';

/**
 * The receiver's bound on handlers running at once (`maxConcurrentHandlers`). A delivery takes a
 * slot after it verified and before its claim, so a delivery refused for want of one leaves no
 * lease behind and costs the store nothing; the slot comes back once the pipeline answered and the
 * handler, if it ran, settled. A handler that outran `handlerTimeoutMs` keeps its slot until it
 * settles: the sender was answered, but the handler still holds its memory and its connections,
 * and freeing the slot at the answer would let hung handlers pile up without a bound, which is
 * what the limit is for. There is no queue: no free slot is an immediate refusal.
 * @internal
 */
export interface HandlerSlots {
  /** A slot, or `undefined` when all `capacity` are taken (nothing is reserved then). */
  tryAcquire(): HandlerSlot | undefined;
  /** Slots taken right now: deliveries between their claim and their answer, and handlers still running after it. */
  readonly running: number;
  readonly capacity: number;
}

/** One taken slot. Call {@link HandlerSlot.done} exactly once, whatever the pipeline's end. @internal */
export interface HandlerSlot {
  /** `run`, wrapped so that the slot stays taken while a call of it runs, past `done` if need be. */
  track<A extends unknown[]>(run: (...args: A) => SameTurn<void>): (...args: A) => SameTurn<void>;
  /** The pipeline has answered: the slot comes back now, or when the tracked handler settles. */
  done(): void;
}

/** {@link HandlerSlots} of `capacity` slots. @internal */
export function createHandlerSlots(capacity: number): HandlerSlots {
  let running = 0;
  return {
    tryAcquire() {
      if (running >= capacity) return undefined;
      running++;
      let handlers = 0;
      let answered = false;
      let freed = false;
      const free = (): void => {
        if (freed || !answered || handlers > 0) return;
        freed = true;
        running--;
      };
      // The tracked handler's end: in this turn when it returned no promise (the slot free at once, no promise made).
      const ended = (): undefined => {
        handlers--;
        free();
        return undefined;
      };
      const failed = (err: unknown): never => {
        ended();
        throw err;
      };
      return {
        track: (run) =>
          function runInSlot(...args) {
            handlers++;
            let pending: SameTurn<void>;
            try {
              pending = run(...args);
            } catch (err) {
              return failed(err);
            }
            return afterTurn(pending, ended, failed);
          },
        done() {
          answered = true;
          free();
        },
      };
    },
    get running() {
      return running;
    },
    capacity,
  };
}
