import { JobhookError } from '../errors.js';
import { pythonFloatRepr } from './float-digits.js';
import { TRUSTED_INPUT, parseBodyUnchecked } from './parse.js';
import { DEFAULT_MAX_DEPTH } from './canonical-option-checks.js';

/**
 * A JSON text spliced verbatim into a payload, so a value received as JSON (say a submission's
 * `user_webhook_parameters`) keeps `1.0`, `1e+16` and 30-digit integers exactly when it is signed.
 */
export class RawJson {
  /** The JSON text of one value. */
  readonly text: string;

  /** @throws JobhookError `ERR_BODY_MALFORMED` when `text` is not exactly one JSON value. */
  constructor(text: string) {
    parseBodyUnchecked(Buffer.from(text, 'utf8'), { ...TRUSTED_INPUT, requireObject: false });
    this.text = text;
  }

  toJSON(): never {
    throw new TypeError('jobhook: RawJson cannot go through JSON.stringify; sign it with signPayload');
  }
}

/** Marks `text` (one JSON value) to be spliced verbatim into a signed payload. */
export function rawJson(text: string): RawJson {
  return new RawJson(text);
}

/**
 * Writes a value as compact JSON that Python's `json.loads` reads back as the intended value:
 * integral numbers and bigints as integers, other numbers as Python float reprs, {@link RawJson}
 * verbatim. The inverse of `toLosslessValue`, for storing a payload as text without losing numbers.
 *
 * @example
 * ```ts
 * stringifyJson({ n: 2n ** 70n, f: rawJson('1.0') }) // '{"n":1180591620717411303424,"f":1.0}'
 * ```
 * @throws JobhookError `ERR_BODY_TOO_DEEP` on cycles or over-deep values, `ERR_BODY_MALFORMED` for functions/symbols.
 */
export function stringifyJson(value: unknown): string {
  return valueToJson(value);
}

/**
 * Writes a JavaScript value as compact JSON that Python's `json.loads` reads back as the intended
 * value: integral numbers (not -0) and bigints as integers, other numbers as Python float reprs
 * (`NaN`, `Infinity` included), {@link RawJson} verbatim, `toJSON()` honoured, `undefined` members
 * skipped (and `null` in arrays), as `JSON.stringify` does.
 * @throws JobhookError `ERR_BODY_TOO_DEEP` on cycles or over-deep values, `ERR_BODY_MALFORMED` for functions/symbols.
 * @internal
 */
export function valueToJson(value: unknown, maxDepth = DEFAULT_MAX_DEPTH): string {
  return write(value, 0, maxDepth) ?? 'null';
}

function write(value: unknown, depth: number, maxDepth: number): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
      if (Number.isInteger(value) && !Object.is(value, -0)) {
        return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
      }
      return pythonFloatRepr(value);
    case 'undefined':
      return undefined;
    case 'object':
      break;
    default:
      throw new JobhookError('ERR_BODY_MALFORMED', `a ${typeof value} has no JSON form`);
  }
  if (value instanceof RawJson) return value.text;
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return write(withToJson.toJSON(), depth, maxDepth);
  if (depth >= maxDepth) {
    throw new JobhookError('ERR_BODY_TOO_DEEP', `the value nests deeper than ${maxDepth} levels (or is cyclic)`);
  }
  if (Array.isArray(value)) {
    const parts = value.map((item: unknown) => write(item, depth + 1, maxDepth) ?? 'null');
    return `[${parts.join(',')}]`;
  }
  const parts: string[] = [];
  for (const key of Object.keys(value)) {
    const text = write((value as Record<string, unknown>)[key], depth + 1, maxDepth);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}
