/**
 * Long runs of non-ASCII text are validated natively; a run the native validator refuses is walked
 * byte by byte so Python's answers stay exact: UTF-8-encoded surrogates accepted (`surrogatepass`),
 * any other bad byte refused at its offset. python3 is the oracle.
 */
import { describe, expect, it } from 'vitest';
import { JobhookError } from '../src/index.js';
import { parseBody } from '../src/json/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { codeOf } from './helpers/error-code.js';
import { execFileSync } from 'node:child_process';

/** python3's json.dumps(json.loads(body), sort_keys=True, indent=2, ensure_ascii=…), as UTF-8 text. */
function pythonCanonical(body: Buffer, ensureAscii: boolean): string {
  const script = `import json,sys\nsys.stdout.buffer.write(json.dumps(json.loads(sys.stdin.buffer.read()), sort_keys=True, indent=2, ensure_ascii=${ensureAscii ? 'True' : 'False'}).encode('utf-8'))`;
  return execFileSync('python3', ['-c', script], { input: body }).toString('utf8');
}

const text = 'Résumé de la réunion — 会議の要点 — Итоги квартала. '.repeat(4); // > 32 bytes beyond ASCII
const body = (middle: Buffer): Buffer => Buffer.concat([Buffer.from(`{"a": "${text}`), middle, Buffer.from(`${text}"}`)]);

describe('long non-ASCII runs', () => {
  it("valid text: canonical forms equal Python's", () => {
    const b = body(Buffer.from('ü'));
    for (const ensureAscii of [false, true]) {
      const ours = canonicalize(b, { profile: ensureAscii ? 'python-ascii' : 'python' });
      expect(ours.toString('utf8')).toBe(pythonCanonical(b, ensureAscii));
    }
  });

  it.each([
    ['a lone continuation byte', Buffer.from([0x80])],
    ['a truncated sequence', Buffer.from([0xe4, 0xbc])],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf])],
    ['a code point past U+10FFFF', Buffer.from([0xf4, 0x90, 0x80, 0x80])],
  ])('%s inside a long run: ERR_BODY_MALFORMED at its offset', (_name, bad) => {
    const b = body(bad);
    let offset: unknown;
    try {
      parseBody(b);
    } catch (err) {
      expect(err).toBeInstanceOf(JobhookError);
      expect((err as JobhookError).code).toBe('ERR_BODY_MALFORMED');
      offset = (err as JobhookError).detail?.['offset'];
    }
    expect(offset).toBe(Buffer.byteLength(`{"a": "${text}`));
  });

  it('an encoded surrogate inside a long run is accepted as Python accepts it (python-ascii only)', () => {
    const b = body(Buffer.from([0xed, 0xa0, 0x80]));
    expect(codeOf(() => canonicalize(b, { profile: 'python' }))).toBe('ERR_CANONICAL_UNREPRESENTABLE');
    expect(canonicalize(b, { profile: 'python-ascii' }).toString('utf8')).toBe(pythonCanonical(b, true));
  });
});
