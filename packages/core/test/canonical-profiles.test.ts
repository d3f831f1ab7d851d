import { describe, expect, it } from 'vitest';
import { JobhookError, type CanonicalProfile } from '../src/index.js';
import { canonicalize } from '../src/canonical/index.js';

const c = (body: string, profile: CanonicalProfile = 'python') => canonicalize(body, { profile }).toString('utf8');

// Expected strings below are what python3's json / orjson print; the differential test checks
// thousands more against python3 itself.
describe('python profile: the cases JSON.parse + JSON.stringify gets wrong', () => {
  it('floats keep Python repr', () => {
    expect(c('{"a": [1.0, 1e-07, 1e16, 1E+16, -0.0, 0.0001, 0.00001, 1e15, 123456789012345678.0, 2.50]}')).toBe(
      '{\n  "a": [\n    1.0,\n    1e-07,\n    1e+16,\n    1e+16,\n    -0.0,\n    0.0001,\n    1e-05,\n    1000000000000000.0,\n    1.2345678901234568e+17,\n    2.5\n  ]\n}',
    );
  });
  it('overflowing and underflowing floats become Infinity and 0.0', () => {
    expect(c('{"a": [1e400, -1e400, 1e-400, -1e-400]}')).toBe('{\n  "a": [\n    Infinity,\n    -Infinity,\n    0.0,\n    -0.0\n  ]\n}');
  });
  it('integers are exact at any size', () => {
    expect(c('{"a": 123456789012345678901234567890, "b": -0}')).toBe('{\n  "a": 123456789012345678901234567890,\n  "b": 0\n}');
  });
  it('keys sort by code point, integer-like keys included', () => {
    expect(c('{"\\ud83d\\ude00": 1, "\\ue000": 2, "b": 3, "10": 4, "2": 5, "A": 6}')).toBe(
      '{\n  "10": 4,\n  "2": 5,\n  "A": 6,\n  "b": 3,\n  "\ue000": 2,\n  "😀": 1\n}',
    );
  });
  it('escapes as Python: controls, quote and backslash only; slash and DEL raw', () => {
    expect(c('{"a": "\\u0000\\u001f\\b\\f\\n\\r\\t\\"\\\\\\/\u007f\u2028é"}')).toBe(
      '{\n  "a": "\\u0000\\u001f\\b\\f\\n\\r\\t\\"\\\\/\u007f\u2028é"\n}',
    );
  });
  it('empty containers stay on one line', () => {
    expect(c('{"a": {}, "b": [], "c": [{}]}')).toBe('{\n  "a": {},\n  "b": [],\n  "c": [\n    {}\n  ]\n}');
  });
  it('a lone surrogate has no UTF-8 form', () => {
    expect(() => c('{"a": "\\ud800"}')).toThrow(JobhookError);
    // ... unless a duplicate key drops it, as in Python's dict
    expect(c('{"a": "\\ud800", "a": 1}')).toBe('{\n  "a": 1\n}');
  });
});

describe('python-ascii profile', () => {
  it('escapes DEL and non-ASCII in lowercase hex, astral as surrogate pairs', () => {
    expect(c('{"é": "\u007f😀\ud7ff", "x": "\\ud800"}', 'python-ascii')).toBe(
      '{\n  "x": "\\ud800",\n  "\\u00e9": "\\u007f\\ud83d\\ude00\\ud7ff"\n}',
    );
  });
});

describe('orjson profile', () => {
  it('writes floats as Ryu does and non-finite as null', () => {
    expect(c('{"a": [1.0, 1e16, 1e-7, 1.234e-5, 0.0001, -0.0, NaN, Infinity, 5e-324]}', 'orjson')).toBe(
      '{\n  "a": [\n    1.0,\n    1e16,\n    1e-7,\n    0.00001234,\n    0.0001,\n    -0.0,\n    null,\n    null,\n    5e-324\n  ]\n}',
    );
  });
  it('refuses integers outside the 64-bit range', () => {
    expect(c('{"a": 18446744073709551615, "b": -9223372036854775808}', 'orjson')).toBe(
      '{\n  "a": 18446744073709551615,\n  "b": -9223372036854775808\n}',
    );
    expect(() => c('{"a": 18446744073709551616}', 'orjson')).toThrow(/64-bit/);
    expect(() => c('{"a": -9223372036854775809}', 'orjson')).toThrow(/64-bit/);
  });
  it('refuses more than 255 nested containers', () => {
    const nest = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    expect(() => c(nest(255), 'orjson')).not.toThrow();
    expect(() => c(nest(256), 'orjson')).toThrow(/255/);
  });
});

describe('javascript profile', () => {
  it('is the sorted JSON.stringify recipe, quirks included', () => {
    expect(c('{"b": 1.0, "10": 1e16, "2": 12345678901234567890, "a": "é"}', 'javascript')).toBe(
      '{\n  "2": 12345678901234567000,\n  "10": 10000000000000000,\n  "a": "é",\n  "b": 1\n}',
    );
  });
  it('cannot read NaN', () => {
    expect(() => c('{"a": NaN}', 'javascript')).toThrow(JobhookError);
  });
});
