import { JobhookError } from '../errors.js';
import type { RecoveredDigest } from '../signature/recover-digest.js';
import { backgroundTimeout } from './background-timeout.js';
import type { BodyBudget } from './body-budget.js';
import type { Admission, ReceiverResponse, RequestHead } from './receiver-types.js';

/** What admissions share with their receiver. @internal */
export interface AdmissionSetup {
  readonly budget: BodyBudget;
  readonly bodyTimeoutMs: number;
  /** The body step, against what the head step recovered; never rejects. */
  receive(
    started: number,
    head: RequestHead,
    recovered: readonly RecoveredDigest[],
    rawBody: Uint8Array | string,
  ): Promise<ReceiverResponse>;
  /** The answer for a body that was not read. */
  refuse(started: number, error: JobhookError): ReceiverResponse;
}

const noop = (): void => {};

/**
 * The admission of a body whose signature decoded: its share of the budget (given back exactly once,
 * by `receive`, `refuse` or the deadline), its deadline, and the body step with what the head step
 * learned. The deadline's AbortController is made only when a reader asks for `signal` (a body a
 * framework kept needs none).
 * @internal
 */
export class BodyAdmission implements Admission {
  #open = true;
  #deadline: AbortController | undefined = undefined;
  #expired: JobhookError | undefined = undefined;
  /** Deadline listeners (`onDeadline`; one per reader, usually one): cheaper than the AbortSignal, made only for those who ask. */
  #listeners: ((reason: JobhookError) => void)[] | undefined = undefined;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly setup: AdmissionSetup,
    private readonly started: number,
    private readonly head: RequestHead,
    private readonly recovered: readonly RecoveredDigest[],
    readonly declaredBytes: number | undefined,
    readonly maxBytes: number,
  ) {
    // An open connection keeps the process alive, not the deadline of its body.
    this.#timer = backgroundTimeout(() => this.#expire(), setup.bodyTimeoutMs);
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
    // Verification runs synchronously from here, so the share comes back once the body is verified.
    this.#settle();
    return this.setup.receive(this.started, this.head, this.recovered, rawBody);
  }

  refuse(error: JobhookError): ReceiverResponse {
    this.#settle();
    return this.setup.refuse(this.started, error);
  }

  #expire(): void {
    this.#settle();
    this.#expired = new JobhookError(
      'ERR_BODY_TIMEOUT',
      `the body did not arrive within ${this.setup.bodyTimeoutMs} ms (bodyTimeoutMs); retry later`,
    );
    this.#deadline?.abort(this.#expired);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(this.#expired);
  }

  #settle(): void {
    if (!this.#open) return;
    this.#open = false;
    clearTimeout(this.#timer);
    this.setup.budget.release(this.maxBytes);
  }
}
