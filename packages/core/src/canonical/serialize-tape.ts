import { ByteWriter } from './byte-writer.js';
import { FloatPass, type FloatMode } from './float-format.js';
import type { SharedKeyOrders } from './shared-key-orders.js';
import type { TapeProfile } from './tape-profiles.js';
import type { ParsedBody } from './tape.js';
import { writeTape } from './tape-writer.js';
import type { WorkBudget } from './work-budget.js';

// The signer writes its body styles through serializeTape too.
export { PYTHON_COMPACT_DUMPS, PYTHON_DEFAULT_DUMPS } from './tape-profiles.js';

/**
 * Writes a parsed body in `profile` (one of `tape-profiles.ts`).
 * @throws JobhookError `ERR_CANONICAL_UNREPRESENTABLE` when the profile's reference would raise.
 * @internal
 */
export function serializeTape(doc: ParsedBody, profile: TapeProfile, floatMode: FloatMode = 'exact', orders?: SharedKeyOrders): Buffer {
  const writer = new ByteWriter(doc.bytes.length + (doc.bytes.length >> 1));
  writeTape(doc, profile, floatMode, writer, orders, new FloatPass());
  return writer.result();
}

/**
 * The lowercase SHA-256 hex of {@link serializeTape}'s bytes, hashed as they are written: memory
 * stays one 64 KiB window whatever the canonical size. `orders` (of this `doc`) share each object's
 * key order with the other forms written with them; `budget` is charged every byte written; `pass`
 * (a new {@link FloatPass} by default) tells the caller afterwards whether floats were approximated.
 * @throws WorkBudgetExhausted when `budget` runs out.
 * @internal
 */
export function digestTape(
  doc: ParsedBody,
  profile: TapeProfile,
  floatMode: FloatMode,
  orders?: SharedKeyOrders,
  budget?: WorkBudget,
  pass: FloatPass = new FloatPass(),
): string {
  const writer = new ByteWriter(0, WINDOW, budget);
  writeTape(doc, profile, floatMode, writer, orders, pass);
  return writer.digestHex();
}

/** The window of {@link digestTape}. Process-wide: serialization is synchronous, so one serves every call. */
const WINDOW = Buffer.allocUnsafe(64 * 1024);
