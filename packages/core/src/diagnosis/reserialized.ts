/** What makes a body look like `JSON.stringify(JSON.parse(body))` of a signed one. @internal */
export interface ReserializationSigns {
  /**
   * Up to five distinct numbers of the body, as written there, that JavaScript writes as integers
   * (a Python float `1.0` or `1e+16` became `1`, `10000000000000000`; an integer beyond 2^53 rounded).
   */
  readonly numbers: readonly string[];
  /** How many integers beyond ±(2^53−1) the body holds: JavaScript has rounded them. */
  readonly bigIntegers: number;
  /** The call whose layout the body has, e.g. `JSON.stringify(value, null, 2)`. */
  readonly layout: string;
}

/** The layouts of `JSON.stringify` that code storing or forwarding a body uses: compact, 2 or 4 spaces, tabs. */
const LAYOUTS: readonly (readonly [indent: number | string | undefined, call: string])[] = [
  [undefined, 'JSON.stringify(value)'],
  [2, 'JSON.stringify(value, null, 2)'],
  [4, 'JSON.stringify(value, null, 4)'],
  ['\t', "JSON.stringify(value, null, '\\t')"],
];

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The re-serialization heuristic: the body is exactly one of JavaScript's layouts of itself
 * (`JSON.stringify` of its own `JSON.parse`, compact or indented, gives the same text) and holds numbers whose JavaScript form may differ
 * from Python's: integer-valued numbers (Python writes a float `1.0` where JavaScript writes `1`,
 * `1e+16` where it writes `10000000000000000`) and integers JavaScript rounded. Other numbers read
 * back to the same value, and whitespace, key order and escapes are ignored by the canonical form,
 * so without such numbers a re-serialization cannot have broken the signature.
 * @returns the signs, or undefined when the body is not that.
 * @internal
 */
export function reserializationSigns(body: Uint8Array): ReserializationSigns | undefined {
  let text: string;
  let value: unknown;
  try {
    text = utf8.decode(body);
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // A file or a log line often ends with a newline the serializer did not write.
  const written = text.endsWith('\n') ? text.slice(0, -1) : text;
  const layout = LAYOUTS.find(([indent]) => JSON.stringify(value, null, indent) === written)?.[1];
  if (layout === undefined) return undefined;
  const numbers: string[] = [];
  const seen = new Set<string>();
  let bigIntegers = 0;
  let integers = 0;
  const walk = (v: unknown): void => {
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) return;
      integers++;
      const big = !Number.isSafeInteger(v);
      if (big) bigIntegers++;
      // The body is JSON.stringify's text, so String(v) is the number as written there. Each once;
      // rounded integers explain most, so they come first.
      const lexeme = String(v);
      if (seen.has(lexeme)) return;
      seen.add(lexeme);
      if (big) numbers.unshift(lexeme);
      else numbers.push(lexeme);
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item);
    } else if (typeof v === 'object' && v !== null) {
      for (const item of Object.values(v)) walk(item);
    }
  };
  walk(value);
  if (integers === 0) return undefined;
  return { numbers: numbers.slice(0, 5), bigIntegers, layout };
}

/**
 * How Python writes a float of the value of `lexeme`, an integer as JavaScript wrote it (`1` →
 * `1.0`, `10000000000000000` → `1e+16`), or undefined for a rounded integer (beyond 2^53: it was
 * an integer there, and JavaScript changed its digits).
 * @internal
 */
export function pythonFloatForm(lexeme: string): string | undefined {
  const value = Number(lexeme);
  if (!Number.isSafeInteger(value) && Math.abs(value) < 1e16) return undefined;
  if (Math.abs(value) < 1e16) return `${lexeme}.0`;
  // Python's repr of a float switches to the shortest exponent form at 1e16: 1e+16, 1.2345e+20.
  return value.toExponential();
}
