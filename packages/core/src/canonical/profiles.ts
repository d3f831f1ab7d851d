import { optionError } from '../internal/option-checks.js';
import type { FloatMode, FloatPass } from './float-format.js';
import { digestTape, serializeTape } from './serialize-tape.js';
import { JAVASCRIPT_PROFILE, ORJSON_PROFILE, PYTHON_ASCII_PROFILE, PYTHON_PROFILE } from './tape-profiles.js';
import type { SharedKeyOrders } from './shared-key-orders.js';
import type { ParsedBody } from './tape.js';
import type { WorkBudget } from './work-budget.js';

/**
 * A canonical JSON profile: the serializer whose bytes a signer hashed.
 *
 * | profile | reference |
 * |---|---|
 * | `python` | `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False)` (the spec's form) |
 * | `python-ascii` | the same with `ensure_ascii=True` |
 * | `orjson` | `orjson.dumps(v, option=OPT_INDENT_2 \| OPT_SORT_KEYS)` (orjson 3.x) |
 * | `javascript` | `JSON.stringify(sortKeysDeep(JSON.parse(body)), null, 2)` |
 */
export type CanonicalProfile = 'python' | 'python-ascii' | 'orjson' | 'javascript';

/** Every profile, in the order verification tries them by default. */
export const CANONICAL_PROFILES: readonly CanonicalProfile[] = Object.freeze(['python', 'python-ascii', 'orjson', 'javascript']);

const TAPE_PROFILES = {
  python: PYTHON_PROFILE,
  'python-ascii': PYTHON_ASCII_PROFILE,
  orjson: ORJSON_PROFILE,
  javascript: JAVASCRIPT_PROFILE,
} as const;

/** True when `name` is a {@link CanonicalProfile}. */
export function isCanonicalProfile(name: unknown): name is CanonicalProfile {
  return typeof name === 'string' && (CANONICAL_PROFILES as readonly string[]).includes(name);
}

/**
 * Writes a parsed body in one profile.
 * @throws JobhookError `ERR_CANONICAL_UNREPRESENTABLE` when that profile's reference would fail.
 */
export function serializeCanonical(doc: ParsedBody, profile: CanonicalProfile): Buffer {
  return serializeCanonicalAs(doc, profile, 'exact');
}

/**
 * {@link serializeCanonical} with a float mode (see {@link FloatMode}), reusing the key orders of
 * earlier forms of `doc` when given. @internal
 */
export function serializeCanonicalAs(doc: ParsedBody, profile: CanonicalProfile, floatMode: FloatMode, orders?: SharedKeyOrders): Buffer {
  return serializeTape(doc, tapeProfile(profile), floatMode, orders);
}

/**
 * Lowercase SHA-256 hex of a profile's canonical bytes, hashed while they are written (bounded memory).
 * `orders` (from `createSharedKeyOrders(doc)`) let the forms of one body that sort keys by the same
 * rule sort each object once; `budget` is charged every byte written; `pass` receives the float
 * state of the pass (whether floats were approximated: see {@link FloatPass}), and its conversions,
 * when shared by the passes over `doc`, convert each float once for every form (javascript's too).
 * @throws JobhookError `ERR_CANONICAL_UNREPRESENTABLE` when that profile's reference would fail.
 * @throws WorkBudgetExhausted when `budget` runs out.
 * @internal
 */
export function digestCanonical(
  doc: ParsedBody,
  profile: CanonicalProfile,
  floatMode: FloatMode,
  orders?: SharedKeyOrders,
  budget?: WorkBudget,
  pass?: FloatPass,
): string {
  return digestTape(doc, tapeProfile(profile), floatMode, orders, budget, pass);
}

function tapeProfile(profile: CanonicalProfile) {
  const found = TAPE_PROFILES[profile];
  if (found === undefined) {
    throw optionError('canonicalize', `unknown profile ${JSON.stringify(profile)}; expected one of ${CANONICAL_PROFILES.join(', ')}`);
  }
  return found;
}
