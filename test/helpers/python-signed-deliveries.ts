/**
 * The signed deliveries the runtime tests send: a body a Python service makes
 * (python-signed-deliveries.py: `json.dumps`, signed over Python's canonical form) signed with the
 * demo key (examples/keys), and the ways it goes wrong that a receiver must refuse.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign, type KeyObject, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCRIPT = resolve(HERE, 'python-signed-deliveries.py');
const KEYS = resolve(HERE, '../../examples/keys');

/** One HTTP request of a delivery: the body bytes and the headers the service sends. */
export interface Delivery {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

/** The deliveries, in the order a test sends them, and what they carry. */
export interface SignedDeliveries {
  /** The service's public key (the demo key), PEM text as published. */
  readonly publicKeyPem: string;
  readonly jobId: string;
  /** The event a JavaScript receiver hands over for `valid`, as Python computed it. */
  readonly expectedEvent: unknown;
  /** Signed by the service's key over this body. */
  readonly valid: Delivery;
  /** `valid`'s signature over a body changed after signing (`A-17` became `A-18`). */
  readonly tampered: Delivery;
  /** The same body, signed by a key of the same size that the receiver does not hold. */
  readonly unknownKey: Delivery;
  /** `valid` again, byte for byte: what the service's retry sends. */
  readonly duplicate: Delivery;
}

function headers(signature: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'python-requests/2.32',
    'x-service-webhook': 'true',
    'x-service-signature': signature,
    'x-service-hash-algorithm': 'SHA256',
  };
}

/** RSA PKCS#1 v1.5 / SHA-256 over the digest's hex text, as spec section 6.3 signs. */
function signDigest(digest: string, key: KeyObject): string {
  return sign('sha256', Buffer.from(digest, 'utf8'), key).toString('hex');
}

/** Runs the Python script (python3 must be on PATH: a missing one fails the caller) and signs its digest. */
export async function makeSignedDeliveries(): Promise<SignedDeliveries> {
  const jobId = randomUUID();
  const finishedAt = new Date().toISOString().replace('Z', '+00:00');
  const { stdout } = await promisify(execFile)('python3', [SCRIPT, jobId, finishedAt], {
    env: { ...process.env, PYTHONIOENCODING: 'utf-8' },
  });
  const made = JSON.parse(stdout) as { body_b64: string; digest: string; expected_event_json: string };
  const body = Buffer.from(made.body_b64, 'base64');
  const serviceKey = createPrivateKey(readFileSync(resolve(KEYS, 'demo.private.pem')));
  const otherKey = generateKeyPairSync('rsa', { modulusLength: serviceKey.asymmetricKeyDetails?.modulusLength ?? 3072 }).privateKey;
  const valid = { body, headers: headers(signDigest(made.digest, serviceKey)) };
  const tamperedBody = Buffer.from(body.toString('utf8').replace('"A-17"', '"A-18"'));
  if (tamperedBody.equals(body)) throw new Error('python-signed-deliveries: the body holds no "A-17" to tamper with');
  return {
    publicKeyPem: readFileSync(resolve(KEYS, 'demo.public.pem'), 'utf8'),
    jobId,
    expectedEvent: JSON.parse(made.expected_event_json),
    valid,
    tampered: { body: tamperedBody, headers: valid.headers },
    unknownKey: { body, headers: headers(signDigest(made.digest, otherKey)) },
    duplicate: { body: Buffer.from(body), headers: { ...valid.headers } },
  };
}
