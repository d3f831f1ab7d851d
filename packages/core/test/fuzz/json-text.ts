/**
 * JSON kept as its tokens' exact spelling, so a signed body can be re-printed with other
 * whitespace, key order, number spellings or string escapes, and the receiver's answer compared
 * with what the canonical form says it should be. Only for the fuzz tests: it reads the valid JSON
 * bodies jobhook's signer writes (Python's `NaN` / `Infinity` included), nothing else.
 */
import { seededRandom } from '../helpers/seeded-random.js';

/** One value: containers hold their parts, every scalar keeps its exact text. */
export type JsonNode =
  | { kind: 'object'; members: JsonMember[] }
  | { kind: 'array'; items: JsonNode[] }
  /** A string (quotes included), a number, `true`, `false`, `null`, `NaN`, `Infinity`, `-Infinity`. */
  | { kind: 'literal'; raw: string };

/** One `"key": value` pair; `key` is the raw string token, quotes included. */
export interface JsonMember {
  key: string;
  value: JsonNode;
}

const SCALAR = /-?Infinity|NaN|true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Parses valid JSON text into a {@link JsonNode}; throws on anything else. */
export function parseJsonTree(text: string): JsonNode {
  let i = 0;
  const skip = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (ch: string): void => {
    skip();
    if (text[i] !== ch) throw new Error(`json-text: expected ${ch} at ${i}`);
    i++;
  };
  const stringToken = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') {
      if (i >= text.length) throw new Error('json-text: unterminated string');
      i += text[i] === '\\' ? 2 : 1;
    }
    i++;
    return text.slice(start, i);
  };
  const value = (): JsonNode => {
    skip();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const members: JsonMember[] = [];
      skip();
      if (text[i] === '}') {
        i++;
        return { kind: 'object', members };
      }
      for (;;) {
        skip();
        const key = stringToken();
        expect(':');
        members.push({ key, value: value() });
        skip();
        if (text[i] === ',') i++;
        else break;
      }
      expect('}');
      return { kind: 'object', members };
    }
    if (ch === '[') {
      i++;
      const items: JsonNode[] = [];
      skip();
      if (text[i] === ']') {
        i++;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(value());
        skip();
        if (text[i] === ',') i++;
        else break;
      }
      expect(']');
      return { kind: 'array', items };
    }
    if (ch === '"') return { kind: 'literal', raw: stringToken() };
    SCALAR.lastIndex = i;
    const m = SCALAR.exec(text);
    if (m === null) throw new Error(`json-text: unexpected ${JSON.stringify(ch)} at ${i}`);
    i += m[0].length;
    return { kind: 'literal', raw: m[0] };
  };
  const root = value();
  skip();
  if (i !== text.length) throw new Error(`json-text: trailing text at ${i}`);
  return root;
}

/**
 * Prints a tree; `gap(slot)` gives the whitespace of each place where JSON allows it (slot counts
 * them in order: before the first token, between any two tokens, after the last).
 */
export function printJsonTree(root: JsonNode, gap: (slot: number) => string): string {
  let slot = 0;
  const out: string[] = [];
  const ws = (): void => void out.push(gap(slot++));
  const write = (node: JsonNode): void => {
    if (node.kind === 'literal') {
      out.push(node.raw);
      return;
    }
    if (node.kind === 'array') {
      out.push('[');
      node.items.forEach((item, n) => {
        if (n > 0) {
          out.push(',');
        }
        ws();
        write(item);
        ws();
      });
      if (node.items.length === 0) ws();
      out.push(']');
      return;
    }
    out.push('{');
    node.members.forEach((member, n) => {
      if (n > 0) out.push(',');
      ws();
      out.push(member.key);
      ws();
      out.push(':');
      ws();
      write(member.value);
      ws();
    });
    if (node.members.length === 0) ws();
    out.push('}');
  };
  ws();
  write(root);
  ws();
  return out.join('');
}

/** A place in a tree where a value sits, to read or replace it. */
export interface ValueSlot {
  get(): JsonNode;
  set(node: JsonNode): void;
}

/** Every value position of the tree (the root first, then depth-first). */
export function valueSlots(root: { node: JsonNode }): ValueSlot[] {
  const slots: ValueSlot[] = [{ get: () => root.node, set: (n) => void (root.node = n) }];
  const visit = (node: JsonNode): void => {
    if (node.kind === 'object') {
      for (const member of node.members) {
        slots.push({ get: () => member.value, set: (n) => void (member.value = n) });
        visit(member.value);
      }
    } else if (node.kind === 'array') {
      node.items.forEach((item, n) => {
        slots.push({ get: () => node.items[n]!, set: (v) => void (node.items[n] = v) });
        visit(item);
      });
    }
  };
  visit(root.node);
  return slots;
}

/** Every object of the tree, depth-first. */
export function objectNodes(root: JsonNode): Array<Extract<JsonNode, { kind: 'object' }>> {
  const out: Array<Extract<JsonNode, { kind: 'object' }>> = [];
  const visit = (node: JsonNode): void => {
    if (node.kind === 'object') {
      out.push(node);
      for (const m of node.members) visit(m.value);
    } else if (node.kind === 'array') {
      for (const item of node.items) visit(item);
    }
  };
  visit(root);
  return out;
}

/** Every string token of the tree, keys included, as places to rewrite. */
export function stringSlots(root: JsonNode): Array<{ get(): string; set(raw: string): void }> {
  const out: Array<{ get(): string; set(raw: string): void }> = [];
  const visit = (node: JsonNode): void => {
    if (node.kind === 'object') {
      for (const m of node.members) {
        out.push({ get: () => m.key, set: (raw) => void (m.key = raw) });
        visit(m.value);
      }
    } else if (node.kind === 'array') {
      for (const item of node.items) visit(item);
    } else if (node.raw.startsWith('"')) {
      out.push({ get: () => node.raw, set: (raw) => void (node.raw = raw) });
    }
  };
  visit(root);
  return out;
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Another spelling of a JSON number, picked by `variant` (`k` tunes it). Some spell the same
 * mathematical value as an int or as a float (`100` / `1e2` / `100.0`, which Python reads as
 * different types), some a value that rounds to the same double, some a different value, and some
 * are not JSON at all. The test does not trust any of them: the canonical form decides.
 */
export function respellNumber(raw: string, variant: number, k: number): string {
  const m = NUMBER.exec(raw);
  if (m === null) return ['0', '-0', '1e400', 'null'][k % 4]!; // NaN / Infinity: swap for a number
  const [, sign = '', int = '0', frac = '', expText = '0'] = m;
  // value = sign DIGITS * 10^exp, DIGITS without leading or trailing zeros ('' for zero).
  let digits = (int + frac).replace(/^0+/, '');
  let exp = Number(expText) - frac.length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exp++;
  }
  if (digits === '') {
    digits = '0';
    exp = 0;
  }
  const zeros = (n: number): string => '0'.repeat(Math.max(0, n));
  const pad = k % 4;
  switch (variant % 14) {
    case 0: // plain integer, when the value is whole
      return exp >= 0 ? sign + digits + zeros(exp) : `${sign}${digits}e${exp}`;
    case 1: {
      // decimal with a point: a float spelling
      if (exp >= 0) return `${sign}${digits}${zeros(exp)}.${zeros(pad + 1)}`;
      const point = digits.length + exp;
      return point > 0
        ? `${sign}${digits.slice(0, point)}.${digits.slice(point)}${zeros(pad)}`
        : `${sign}0.${zeros(-point)}${digits}${zeros(pad)}`;
    }
    case 2: {
      // scientific, point after the first digit
      const power = exp + digits.length - 1;
      const mark = pad % 2 === 0 ? 'e' : 'E';
      const plus = power >= 0 && pad >= 2 ? '+' : '';
      return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}${mark}${plus}${power}`;
    }
    case 3: // scientific, integer mantissa
      return `${sign}${digits}e${exp}`;
    case 4: // a different exponent spelling: leading zeros, explicit sign
      return `${sign}${digits}e${exp < 0 ? '-' : '+'}${zeros(pad)}${Math.abs(exp)}`;
    case 5: // trailing fraction zeros dropped or added, as written
      return frac === '' ? `${raw}.0` : raw.replace(/(\.\d*?)0+(?=$|[eE])/, '$1').replace(/\.(?=$|[eE])/, '');
    case 6: // the other zero
      return sign === '-' ? raw.slice(1) : `-${raw}`;
    case 7: // last digit changed: a different value
      return raw.replace(/(\d)(?=(?:[eE][+-]?\d+)?$)/, (d) => String((Number(d) + 1 + pad) % 10));
    case 8: // more precision than a double holds: same double, different decimal
      return `${sign}${int}.${frac}${zeros(17)}${1 + pad}`;
    case 9: // overflow to infinity
      return `${sign}${digits}e${400 + pad}`;
    case 10: // underflow to zero
      return `${sign}${digits}e-${400 + pad}`;
    case 11: // not JSON: leading zero, plus sign, bare point, hex
      return [`0${raw.replace(/^-/, '')}`, `+${raw}`, `${raw}.`, `0x${digits}`][pad]!;
    case 12: // Python's non-JSON literals
      return ['NaN', 'Infinity', '-Infinity', `${sign}Infinity`][pad]!;
    default: // an integer beside it by one: differs exactly, and maybe not as a double
      return exp >= 0 ? `${sign}${(BigInt(digits + zeros(exp)) + BigInt(pad + 1)).toString()}` : raw;
  }
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/**
 * Re-escapes a string token code unit by code unit, each per the next of `choices`: as-is
 * (where JSON allows it raw), `\uXXXX` lower or upper case, a short escape (`\/`, `\n`, ...).
 * The decoded string stays the same. Choice 4 corrupts one unit in a way that is either not
 * JSON or a different string (for refusals).
 */
export function reescapeString(raw: string, choices: readonly number[]): string {
  let text: string;
  try {
    text = JSON.parse(raw) as string;
  } catch {
    return raw; // already broken by an earlier corruption: leave it so
  }
  let out = '"';
  let n = 0;
  for (const ch of text) {
    // By code point, so a surrogate pair is written whole (both raw or both escaped); a lone
    // surrogate cannot be written raw in UTF-8 at all, so it is always escaped.
    const choice = choices.length === 0 ? 0 : choices[n % choices.length]! % 6;
    const units = [...Array(ch.length).keys()].map((u) => ch.charCodeAt(u).toString(16).padStart(4, '0'));
    const lone = ch.length === 1 && ch.charCodeAt(0) >= 0xd800 && ch.charCodeAt(0) <= 0xdfff;
    const unit = ch.charCodeAt(0);
    if (choice === 1 || lone) out += units.map((h) => `\\u${h}`).join('');
    else if (choice === 2) out += units.map((h) => `\\u${h.toUpperCase()}`).join('');
    else if (choice === 3 && SHORT_ESCAPES[ch] !== undefined) out += SHORT_ESCAPES[ch];
    else if (choice === 4 && n === 0) out += ['\\x41', '\\u12g4', '\u0001', '\\U0041', '\\'][unit % 5]!;
    else if (choice === 5 && n === 0) out += ch === 'A' ? 'a' : 'A';
    else if (ch === '"' || ch === '\\' || unit < 0x20) out += SHORT_ESCAPES[ch] ?? `\\u${units[0]!}`;
    else out += ch;
    n++;
  }
  return `${out}"`;
}

/** A seeded PRNG for whitespace that shrinks with its seed. */
export const prng = seededRandom;
