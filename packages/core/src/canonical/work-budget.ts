/**
 * What one verification may spend writing candidate canonical forms, in bytes written (and hashed)
 * over all of them. The forms' count and each one's size are bounded already (by the body's
 * features and `maxCanonicalBytes`); this bounds their product, so a body with a real signature
 * over another body costs a small multiple of parsing it whatever its shape.
 * @internal
 */
export class WorkBudget {
  constructor(private left: number) {}

  /** Spends `bytes`. @throws WorkBudgetExhausted when the budget is gone. */
  charge(bytes: number): void {
    this.left -= bytes;
    if (this.left < 0) throw new WorkBudgetExhausted();
  }

  /** What is left (negative once exhausted). */
  get remaining(): number {
    return this.left;
  }
}

/** Thrown by {@link WorkBudget.charge}; the verifier answers it as a mismatch. @internal */
export class WorkBudgetExhausted extends Error {
  constructor() {
    super('the verification work budget is exhausted');
    this.name = 'WorkBudgetExhausted';
  }
}
