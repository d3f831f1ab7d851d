// Test sizes from the environment (CHAOS_JOBS, CHAOS_SEED, …), refused loudly when mistyped.

/** The positive integer in `process.env[name]`, or `fallback` when unset or empty; throws on anything else. */
export function envInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return value;
}
