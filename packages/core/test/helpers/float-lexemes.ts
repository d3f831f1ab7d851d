/**
 * 64 distinct 17-digit float lexemes, each its value's shortest form: as many as an as-written pass
 * checks exactly (EXACT_CHECKS_PER_PASS), each check passed, so the lexemes after them are written
 * as they stand. Distinct, because a run of one lexeme is checked once.
 */
export const SHORTEST_17: readonly string[] = Array.from({ length: 400 }, (_, i) => `0.1234567890123${String(i).padStart(4, '0')}`)
  .filter((s) => String(Number(s)) === s)
  .slice(0, 64);
