import { JobhookError } from '../errors.js';
import type { RecoveredDigest } from '../signature/recover-digest.js';
import { backgroundTimeout } from './background-timeout.js';
import type { BodyBudget } from './body-budget.js';
import type { Admission, ReceiverResponse, RequestHead } from './receiver-types.js';

/** What admissions share with their receiver. @internal */
export interface AdmissionSetup {
  readonly budget: BodyBudget;
  /** Longest time from the head to the body's last byte. */
  readonly bodyTimeoutMs: number;
  /** Longest time from the head to the body's first byte. */
  readonly bodyStartTimeoutMs: number;
  /** Least average pace of the body once `bodyStartTimeoutMs` has passed. */
  readonly minBodyBytesPerSecond: number;
  /** The body step, against what the head step recovered; never rejects. */
  receive(
    started: number,
    head: RequestHead,
    recovered: readonly RecoveredDigest[],
    rawBody: Uint8Array | string,
  ): Promise<ReceiverResponse>;
  /** The answer for a body that was not read. */
  refuse(started: number, error: JobhookError): ReceiverResponse;
  /** The signature's body is no longer in flight (`signatureKey` of the admission). */
  signatureDone(signatureKey: string): void;
}

const noop = (): void => {};

/**
 * The admission of a body whose signature decoded. Its bytes are charged to the budget as they
 * arrive (`charge`, called by core's readers) under the client's share key, and all of it is given
 * back exactly once, by `receive`, `refuse` or the deadline. The deadline moves with the body: its
 * first byte is due `bodyStartTimeoutMs` after the head, and each byte buys `1 / minBodyBytesPerSecond`
 * seconds more, up to `bodyTimeoutMs` after the head. One timer, re-armed only when it fires early
 * (never per chunk). The AbortController of `signal` is made only when a reader asks for it.
 * @internal
 */
export class BodyAdmission implements Admission {
  #open = true;
  #charged = 0;
  #deadline: AbortController | undefined = undefined;
  #expired: JobhookError | undefined = undefined;
  /** Deadline listeners (`onDeadline`; one per reader, usually one): cheaper than the AbortSignal, made only for those who ask. */
  #listeners: ((reason: JobhookError) => void)[] | undefined = undefined;
  #timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly setup: AdmissionSetup,
    private readonly started: number,
    private readonly head: RequestHead,
    private readonly recovered: readonly RecoveredDigest[],
    readonly declaredBytes: number | undefined,
    readonly maxBytes: number,
    private readonly client: string,
    private readonly signatureKey: string,
  ) {
    // An open connection keeps the process alive, not the deadline of its body.
    this.#timer = backgroundTimeout(() => this.#check(), Math.min(setup.bodyStartTimeoutMs, setup.bodyTimeoutMs));
  }

  charge(bytes: number): JobhookError | undefined {
    if (!this.#open) {
      return this.#expired ?? new JobhookError('ERR_BODY_INCOMPLETE', 'request body incomplete: its admission has ended');
    }
    const { budget } = this.setup;
    if (!budget.tryReserve(bytes, this.client, this.#charged)) {
      return new JobhookError(
        'ERR_RECEIVER_BUSY',
        `${budget.reserved} bytes of bodies are being read (maxBodyBytesInFlight ${budget.capacity}); retry later`,
        { detail: { cause: budget.reserved + bytes <= budget.capacity ? 'client-share' : 'budget' } },
      );
    }
    this.#charged += bytes;
    return undefined;
  }

  onDeadline(listener: (reason: JobhookError) => void): () => void {
    if (this.#expired !== undefined) {
      listener(this.#expired);
      return noop;
    }
    (this.#listeners ??= []).push(listener);
    return () => {
      const at = this.#listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.#listeners!.splice(at, 1);
    };
  }

  get signal(): AbortSignal {
    if (this.#deadline === undefined) {
      this.#deadline = new AbortController();
      if (this.#expired !== undefined) this.#deadline.abort(this.#expired);
    }
    return this.#deadline.signal;
  }

  receive(rawBody: Uint8Array | string): Promise<ReceiverResponse> {
    // Verification runs synchronously from here, so the charge comes back once the body is verified.
    this.#settle();
    return this.setup.receive(this.started, this.head, this.recovered, rawBody);
  }

  refuse(error: JobhookError): ReceiverResponse {
    this.#settle();
    return this.setup.refuse(this.started, error);
  }

  /** Milliseconds until the body's deadline as it stands now (what a second body of the same signature waits for at most). */
  msLeft(): number {
    return Math.max(0, this.#dueAt() - performance.now());
  }

  /** When the body must be in by, from what has arrived: ms on `performance.now()`'s clock. */
  #dueAt(): number {
    const { bodyTimeoutMs, bodyStartTimeoutMs, minBodyBytesPerSecond } = this.setup;
    const paced = bodyStartTimeoutMs + (this.#charged * 1000) / minBodyBytesPerSecond;
    return this.started + Math.min(bodyTimeoutMs, paced);
  }

  #check(): void {
    if (!this.#open) return;
    const left = this.#dueAt() - performance.now();
    if (left > 0) {
      this.#timer = backgroundTimeout(() => this.#check(), Math.ceil(left));
      return;
    }
    this.#expire();
  }

  #expire(): void {
    const { bodyTimeoutMs, bodyStartTimeoutMs, minBodyBytesPerSecond } = this.setup;
    const started = this.#charged > 0;
    const paced = bodyStartTimeoutMs + (this.#charged * 1000) / minBodyBytesPerSecond;
    this.#settle();
    const [cause, why] = !started
      ? (['start', `the body did not start within ${bodyStartTimeoutMs} ms of its head (bodyStartTimeoutMs)`] as const)
      : paced < bodyTimeoutMs
        ? (['rate', `the body arrived slower than ${minBodyBytesPerSecond} bytes/s (minBodyBytesPerSecond)`] as const)
        : (['deadline', `the body did not arrive within ${bodyTimeoutMs} ms (bodyTimeoutMs)`] as const);
    this.#expired = new JobhookError('ERR_BODY_TIMEOUT', `${why}; retry later`, { detail: { cause } });
    this.#deadline?.abort(this.#expired);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(this.#expired);
  }

  #settle(): void {
    if (!this.#open) return;
    this.#open = false;
    clearTimeout(this.#timer);
    this.setup.budget.release(this.#charged, this.client);
    this.setup.signatureDone(this.signatureKey);
  }
}
