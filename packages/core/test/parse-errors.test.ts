import { describe, expect, it } from 'vitest';
import type { JobhookError } from '../src/index.js';
import { parseBody, toValue } from '../src/json/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { codeOf } from './helpers/error-code.js';

const text = (s: string) => canonicalize(s).toString('utf8');

describe('parseBody: what Python json.loads refuses is ERR_BODY_MALFORMED', () => {
  const malformed: Array<[string, string | Uint8Array]> = [
    ['empty body', ''],
    ['whitespace only', ' \n\t'],
    ['not JSON', 'hello'],
    ['single quotes', "{'a': 1}"],
    ['trailing comma in object', '{"a": 1,}'],
    ['trailing comma in array', '{"a": [1,]}'],
    ['missing colon', '{"a" 1}'],
    ['unquoted key', '{a: 1}'],
    ['trailing garbage', '{"a": 1}x'],
    ['two values', '{"a": 1} {"b": 2}'],
    ['truncated', '{"a": "b'],
    ['leading zero', '{"a": 01}'],
    ['bare dot', '{"a": 1.}'],
    ['leading dot', '{"a": .5}'],
    ['plus sign', '{"a": +1}'],
    ['empty exponent', '{"a": 1e}'],
    ['hex number', '{"a": 0x10}'],
    ['lowercase nan', '{"a": nan}'],
    ['-NaN', '{"a": -NaN}'],
    ['bad literal', '{"a": tru}'],
    ['raw control char in string', '{"a": "x\u0001y"}'],
    ['raw newline in string', '{"a": "x\ny"}'],
    ['bad escape', '{"a": "\\x41"}'],
    ['short \\u escape', '{"a": "\\u12"}'],
    ['non-hex \\u escape', '{"a": "\\u12G4"}'],
    ['form feed as whitespace', '\f{"a": 1}'],
    ['NBSP as whitespace', '\u00a0{"a": 1}'],
    ['invalid UTF-8 byte', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
    ['overlong UTF-8', Buffer.from('{"a":"\xc0\xaf"}', 'latin1')],
    ['truncated UTF-8', Buffer.from('{"a":"\xe2\x82"}', 'latin1')],
    ['UTF-8 above U+10FFFF', Buffer.from('{"a":"\xf4\x90\x80\x80"}', 'latin1')],
    ['UTF-16LE body', Buffer.from('\ufeff{"a":1}', 'utf16le')],
    ['4301-digit integer', `{"a": ${'1'.repeat(4301)}}`],
  ];
  it.each(malformed)('%s', (_name, body) => {
    expect(codeOf(() => parseBody(typeof body === 'string' ? Buffer.from(body) : body))).toBe('ERR_BODY_MALFORMED');
  });

  it('reports the byte offset of a syntax error', () => {
    try {
      parseBody(Buffer.from('{"a": 1,, }'));
      expect.unreachable();
    } catch (err) {
      expect((err as JobhookError).detail).toEqual({ offset: 8 });
      expect((err as JobhookError).status).toBe(400);
    }
  });
});

describe('parseBody: what Python json.loads accepts', () => {
  it('accepts NaN, Infinity and -Infinity', () => {
    expect(text('{"a": [NaN, Infinity, -Infinity]}')).toBe('{\n  "a": [\n    NaN,\n    Infinity,\n    -Infinity\n  ]\n}');
  });
  it('skips a leading UTF-8 BOM, as json.loads does for bytes', () => {
    expect(text('\ufeff{"a": 1}')).toBe('{\n  "a": 1\n}');
  });
  it('accepts a 4300-digit integer, sign not counted', () => {
    const big = `-${'9'.repeat(4300)}`;
    expect(text(`{"a": ${big}}`)).toBe(`{\n  "a": ${big}\n}`);
  });
  it('accepts UTF-8-encoded surrogates (surrogatepass) but cannot write them as UTF-8', () => {
    const body = Buffer.from('{"a":"\xed\xa0\x80"}', 'latin1');
    expect(codeOf(() => canonicalize(body))).toBe('ERR_CANONICAL_UNREPRESENTABLE');
    expect(canonicalize(body, { profile: 'python-ascii' }).toString()).toBe('{\n  "a": "\\ud800"\n}');
  });
  it('keeps the last of duplicate keys', () => {
    expect(text('{"a": 1, "b": 2, "a": 3}')).toBe('{\n  "a": 3,\n  "b": 2\n}');
    expect(toValue(parseBody(Buffer.from('{"a": 1, "a": {"x": 2}}')))).toEqual({ a: { x: 2 } });
  });
  it('treats __proto__ and constructor as ordinary keys (no prototype pollution)', () => {
    const value = toValue(parseBody(Buffer.from('{"__proto__": {"polluted": true}, "constructor": 1}'))) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(value['constructor']).toBe(1);
  });
  it('hands big integers over as bigint and -0 as 0', () => {
    const value = toValue(parseBody(Buffer.from('{"big": 123456789012345678901234567890, "safe": 9007199254740991, "z": -0, "f": -0.0}')));
    expect(value).toEqual({ big: 123456789012345678901234567890n, safe: 9007199254740991, z: 0, f: -0 });
    expect(Object.is((value as { z: number }).z, 0)).toBe(true);
  });
});

describe('limits', () => {
  it('ERR_BODY_TOO_LARGE (413) before parsing anything', () => {
    const err = (() => {
      try {
        canonicalize(`{"a": "${'x'.repeat(100)}"}`, { maxBodyBytes: 50 });
      } catch (e) {
        return e as JobhookError;
      }
      return undefined;
    })();
    expect(err?.code).toBe('ERR_BODY_TOO_LARGE');
    expect(err?.status).toBe(413);
  });
  it('ERR_BODY_TOO_DEEP for a 100,000-deep body, without overflowing the stack', () => {
    const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(codeOf(() => canonicalize(deep, { maxBodyBytes: 1 << 20 }))).toBe('ERR_BODY_TOO_DEEP');
    const unclosed = '['.repeat(100_000);
    expect(codeOf(() => canonicalize(unclosed))).toBe('ERR_BODY_TOO_DEEP');
  });
  it('maxDepth counts the top-level object as 1', () => {
    expect(codeOf(() => canonicalize('{"a": {"b": 1}}', { maxDepth: 2 }))).toBe('no error');
    expect(codeOf(() => canonicalize('{"a": {"b": []}}', { maxDepth: 2 }))).toBe('ERR_BODY_TOO_DEEP');
  });
  it('ERR_BODY_NOT_OBJECT for JSON that is not an object', () => {
    for (const body of ['[1, 2]', '"x"', '1', 'null', 'true']) {
      expect(codeOf(() => canonicalize(body))).toBe('ERR_BODY_NOT_OBJECT');
    }
  });
  it('rejects bad options at call time with ERR_OPTION_INVALID', () => {
    expect(codeOf(() => canonicalize('{}', { maxDepth: 0 }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => canonicalize('{}', { maxDepth: 1e6 }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => canonicalize('{}', { maxBodyBytes: -1 }))).toBe('ERR_OPTION_INVALID');
    // @ts-expect-error an unknown profile is refused, not silently replaced
    expect(codeOf(() => canonicalize('{}', { profile: 'pyhton' }))).toBe('ERR_OPTION_INVALID');
  });
});
