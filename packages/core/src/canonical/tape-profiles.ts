import { JobhookError } from '../errors.js';
import { pythonLayout, ryuLayout } from './float-digits.js';
import type { FloatLayout } from './float-format.js';

/** How a canonical profile writes a parsed body (see `tape-writer.ts`). @internal */
export interface TapeProfile {
  readonly name: string;
  /**
   * `JSON.stringify`'s rules instead of Python's: keys in `Object.keys(o).sort()` order, numbers as
   * doubles, strings as `JSON.stringify` escapes them, and no NaN or Infinity (`JSON.parse` refuses
   * them). See `javascript-profile.ts`.
   */
  readonly javascript: boolean;
  /** `ensure_ascii=True`: escape DEL and everything non-ASCII. */
  readonly ascii: boolean;
  /** Float layout. */
  readonly floatLayout: FloatLayout;
  /** How NaN and the infinities are written. */
  readonly nonFinite: { nan: string; inf: string; ninf: string };
  /** orjson refuses integers outside [-2^63, 2^64 - 1]. */
  readonly int64Only: boolean;
  /** orjson refuses more than 255 nested containers. */
  readonly maxDepth: number;
  /** Keys in code-point order (`sort_keys=True`); otherwise in first-seen order, as a Python dict keeps them. */
  readonly sortKeys: boolean;
  /** Spaces per level, or `null` for one line (`indent=None`). */
  readonly indent: number | null;
  /** Between items: `","` when indenting, `", "` for `json.dumps` defaults. */
  readonly itemSeparator: string;
  /** Between key and value. */
  readonly keySeparator: string;
}

/** `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False)`. @internal */
export const PYTHON_PROFILE: TapeProfile = {
  name: 'python',
  javascript: false,
  ascii: false,
  floatLayout: pythonLayout,
  nonFinite: { nan: 'NaN', inf: 'Infinity', ninf: '-Infinity' },
  int64Only: false,
  maxDepth: Number.POSITIVE_INFINITY,
  sortKeys: true,
  indent: 2,
  itemSeparator: ',',
  keySeparator: ': ',
};

/** `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=True)`. @internal */
export const PYTHON_ASCII_PROFILE: TapeProfile = { ...PYTHON_PROFILE, name: 'python-ascii', ascii: true };

/** `orjson.dumps(v, option=OPT_INDENT_2 | OPT_SORT_KEYS)` as of orjson 3.x (Ryu floats, NaN/Infinity as null). @internal */
export const ORJSON_PROFILE: TapeProfile = {
  ...PYTHON_PROFILE,
  name: 'orjson',
  floatLayout: ryuLayout,
  nonFinite: { nan: 'null', inf: 'null', ninf: 'null' },
  int64Only: true,
  maxDepth: 255,
};

/** `json.dumps(v)` with Python's defaults: one line, `", "` and `": "`, ASCII escapes, keys unsorted. @internal */
export const PYTHON_DEFAULT_DUMPS: TapeProfile = {
  ...PYTHON_PROFILE,
  name: 'python-default',
  ascii: true,
  sortKeys: false,
  indent: null,
  itemSeparator: ', ',
  keySeparator: ': ',
};

/** `json.dumps(v, separators=(",", ":"), ensure_ascii=False)`: compact, keys unsorted. @internal */
export const PYTHON_COMPACT_DUMPS: TapeProfile = {
  ...PYTHON_PROFILE,
  name: 'python-compact',
  sortKeys: false,
  indent: null,
  itemSeparator: ',',
  keySeparator: ':',
};

/**
 * `JSON.stringify(sortKeysDeep(JSON.parse(body)), null, 2)`: two-space indentation and the Python
 * profile's separators, JavaScript's keys, numbers and strings (see `javascript-profile.ts`).
 * @internal
 */
export const JAVASCRIPT_PROFILE: TapeProfile = { ...PYTHON_PROFILE, name: 'javascript', javascript: true };

/** Refuses a body that `profile`'s reference serializer would refuse. @internal */
export function unrepresentable(profile: TapeProfile, why: string): never {
  throw new JobhookError('ERR_CANONICAL_UNREPRESENTABLE', `the ${profile.name} profile cannot represent ${why}`);
}
