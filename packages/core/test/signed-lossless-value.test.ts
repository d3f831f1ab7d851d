/**
 * The exact-number path: `losslessPayload()` (on the verify result and the handler context) is built
 * from the canonical bytes that verified, never from the body. Each case mounts a body that verifies
 * while its own lexemes differ from what was signed: the body's `toLosslessValue(parseBody(...))`
 * shows the unsigned value, `losslessPayload()` the signed one.
 */
import { constants, createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReceiver, createVerifier, type CanonicalProfile, type LosslessJsonValue } from '../src/index.js';
import { parseBody, stringifyJson, toLosslessValue } from '../src/json/index.js';
import { canonicalize } from '../src/canonical/index.js';
import { createTestKeyPair } from '../src/testing/index.js';

const keys = createTestKeyPair();
const verifier = createVerifier({ publicKeys: keys.publicKeyPem });

/** The service's signature over `signedBody`'s canonical form in `profile`. */
function signatureOver(signedBody: string, profile: CanonicalProfile): string {
  const digest = createHash('sha256').update(canonicalize(signedBody, { profile })).digest('hex');
  return sign('sha256', Buffer.from(digest, 'latin1'), { key: keys.privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('hex');
}

const text = (value: LosslessJsonValue): string => stringifyJson(value);

// Each: what was signed, the body that arrives, the profile under which both have the same canonical form.
const ATTACKS: { name: string; signed: string; sent: string; profile: CanonicalProfile }[] = [
  { name: 'a signed null sent as NaN', signed: '{"x": null}', sent: '{"x": NaN}', profile: 'orjson' },
  { name: 'a signed null sent as 1e999', signed: '{"x": null}', sent: '{"x": 1e999}', profile: 'orjson' },
  { name: 'a signed 3 sent as 3.0', signed: '{"x": 3}', sent: '{"x": 3.0}', profile: 'javascript' },
  {
    name: 'a signed 10**18 sent as 1000000000000000063',
    signed: '{"x": 1000000000000000000}',
    sent: '{"x": 1000000000000000063}',
    profile: 'javascript',
  },
  { name: 'an extra "__proto__" member', signed: '{"x": 1}', sent: '{"x": 1, "__proto__": {"admin": true}}', profile: 'javascript' },
  { name: 'a signed 0.1 sent with 20 more digits', signed: '{"x": 0.1}', sent: '{"x": 0.10000000000000000555}', profile: 'python' },
  { name: 'a signed 1e+16 sent as 10000000000000000.0', signed: '{"x": 1e16}', sent: '{"x": 10000000000000000.0}', profile: 'python' },
];

describe('losslessPayload(): numbers only from signed bytes', () => {
  it.each(ATTACKS)('$name: verifies, the body reads otherwise, losslessPayload() gives the signed value', ({ signed, sent, profile }) => {
    const signature = signatureOver(signed, profile);
    const result = verifier.verify({ body: sent, signature });
    expect(result.profile).toBe(profile);
    const signedValue = toLosslessValue(parseBody(canonicalize(signed, { profile })));
    // The attack: the README's old path reads the body's own lexemes, which differ from the signed ones.
    expect(text(toLosslessValue(parseBody(Buffer.from(sent))))).not.toBe(text(signedValue));
    expect(text(result.losslessPayload())).toBe(text(signedValue));
  });

  it('keeps what the signed bytes write: 1.0 stays 1.0, big integers keep every digit', () => {
    const body = '{"a": 1.0, "b": 123456789012345678901234567890, "c": [1e-7, -0.0]}';
    const result = verifier.verify({ body, signature: signatureOver(body, 'python') });
    expect(text(result.losslessPayload())).toBe('{"a":1.0,"b":123456789012345678901234567890,"c":[1e-07,-0.0]}');
  });

  it('is on the handler context, built from the signed bytes', async () => {
    const now = new Date().toISOString();
    const envelope = (x: string) =>
      `{"event": "async_job_completed", "job_id": "7d1f0c52-6f43-4a53-9d55-0b2a4a8f6c10", "status": "success", "feature": "ocr", ` +
      `"subfeature": "ocr_async", "provider": "amazon", "model": null, "created_at": "${now}", ` +
      `"finished_at": "${now}", "output": {"score": ${x}}}`;
    let seen: LosslessJsonValue | undefined;
    const receiver = createReceiver({
      publicKeys: keys.publicKeyPem,
      onEvent: (_event, context) => {
        seen = context.losslessPayload();
      },
    });
    const res = await receiver.handle({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': signatureOver(envelope('0.1'), 'python') },
      rawBody: Buffer.from(envelope('0.10000000000000000555')),
    });
    expect(res.status).toBe(200);
    expect(text((seen as { output: LosslessJsonValue }).output)).toBe('{"score":0.1}');
  });
});
