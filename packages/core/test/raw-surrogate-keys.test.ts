/**
 * Keys Python tells apart but JavaScript strings cannot: UTF-8-encoded surrogates (accepted by
 * `json.loads` on bytes) stay lone code points in Python, while a JavaScript string pairs them into
 * the astral character they spell. A signed body holding both must hand over what the signed form
 * means to Python (`json.loads(canonical)`), whatever order the body lists them in.
 */
import { execFileSync } from 'node:child_process';
import { constants, createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../src/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { createTestKeyPair } from '../src/testing/index.js';

const keys = createTestKeyPair();
const rawPair = Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]); // U+D83D U+DE00 as two encoded surrogates

/** python3's reading of the signed canonical bytes: the value under "😀". */
function pythonValueOfEmojiKey(canonical: Buffer): unknown {
  const script = 'import json,sys\nprint(json.dumps(json.loads(sys.stdin.buffer.read())["\\U0001F600"]))';
  return JSON.parse(execFileSync('python3', ['-c', script], { input: canonical }).toString('utf8'));
}

describe('UTF-8-encoded surrogate keys', () => {
  it.each([
    ['emoji first', (raw: Buffer) => Buffer.concat([Buffer.from('{"job":"x","😀":2,"'), raw, Buffer.from('":1}')])],
    ['encoded surrogates first', (raw: Buffer) => Buffer.concat([Buffer.from('{"job":"x","'), raw, Buffer.from('":1,"😀":2}')])],
  ])('%s: the payload holds what the signed canonical form means', (_name, build) => {
    const body = build(rawPair);
    const canonical = canonicalize(body, { profile: 'python-ascii' });
    const digest = createHash('sha256').update(canonical).digest('hex');
    const signature = sign('sha256', Buffer.from(digest), { key: keys.privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('hex');
    const result = createVerifier({ publicKeys: keys.publicKeyPem }).verify({ body, signature });
    expect(result.profile).toBe('python-ascii');
    expect(result.payload['😀']).toEqual(pythonValueOfEmojiKey(canonical));
  });
});
