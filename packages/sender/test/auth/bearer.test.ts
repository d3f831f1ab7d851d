import { describe, expect, test } from 'vitest';
import { readBearerToken } from '../../src/auth/bearer.js';

const T = 'jh_inf_Zk3p9QwErTy0uIoPaSdFgHjKl4b2';

describe('readBearerToken (the header value as the app sees it)', () => {
  test.each([
    [`Bearer ${T}`, T],
    ['Bearer abc-._~+/xyz==', 'abc-._~+/xyz=='],
  ])('accepts %j', (value, token) => {
    expect(readBearerToken(['Authorization', value])).toEqual({ ok: true, token });
    // Header names are case-insensitive (RFC 9110); only the scheme is case-sensitive.
    expect(readBearerToken(['authorization', value])).toEqual({ ok: true, token });
  });

  const refused: [string, readonly string[], string][] = [
    ['no Authorization header', ['Host', 'x'], 'missing Authorization header'],
    ['an empty value', ['Authorization', ''], 'empty Authorization header'],
    ['scheme in lower case', ['Authorization', `bearer ${T}`], 'the scheme must be "Bearer"'],
    ['scheme in upper case', ['Authorization', `BEARER ${T}`], 'the scheme must be "Bearer"'],
    ['scheme alone', ['Authorization', 'Bearer'], 'the scheme must be "Bearer"'],
    ['scheme and a space', ['Authorization', 'Bearer '], 'no token after "Bearer "'],
    ['two spaces', ['Authorization', `Bearer  ${T}`], 'no extra spaces'],
    ['a leading space', ['Authorization', ` Bearer ${T}`], 'the scheme must be "Bearer"'],
    ['a trailing space', ['Authorization', `Bearer ${T} `], 'no extra spaces'],
    ['a tab', ['Authorization', `Bearer\t${T}`], 'the scheme must be "Bearer"'],
    ['a trailing CRLF', ['Authorization', `Bearer ${T}\r\n`], 'line breaks'],
    ['a second word', ['Authorization', `Bearer ${T} extra`], 'no extra spaces'],
    ['a quoted token', ['Authorization', `Bearer "${T}"`], 'quotes'],
    ['comma-joined values', ['Authorization', `Bearer ${T},Bearer ${T}`], 'commas'],
    ['Basic', ['Authorization', `Basic ${T}`], 'the scheme must be "Bearer"'],
    ['Token', ['Authorization', `Token ${T}`], 'the scheme must be "Bearer"'],
    ['padding in the middle', ['Authorization', 'Bearer ab=cd'], 'then = padding'],
    ['a non-ASCII token', ['Authorization', 'Bearer tökén'], 'A-Z a-z 0-9'],
    ['two Authorization headers', ['Authorization', `Bearer ${T}`, 'authorization', `Bearer ${T}`], 'more than one Authorization header'],
  ];

  test.each(refused)('refuses %s', (_name, raw, detail) => {
    const result = readBearerToken(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).toContain(detail);
  });
});
