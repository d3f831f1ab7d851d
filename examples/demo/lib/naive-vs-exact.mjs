// Why a receiver cannot verify with JSON.parse + JSON.stringify: the service signs Python's
// json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=False), and only the body reaches the
// receiver, so the receiver must rebuild those exact bytes from it.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { createVerifier } from '@jobhook/core';

const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** What a JavaScript developer would write first: sort the keys, indent by 2. */
function naiveCanonical(body) {
  return Buffer.from(JSON.stringify(sortKeys(JSON.parse(body.toString('utf8'))), null, 2));
}

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

/**
 * Compares two naive digests with jobhook's canonical one, for a delivered body and its signature.
 * @returns {{ exact: { digest: string, profile: string }, naive: { name: string, digest: string, verifies: boolean }[], differences: [string, string][] }}
 */
export function compareNaiveAndExact(body, signatureHex, publicKeyPem) {
  const exact = createVerifier({ publicKeys: publicKeyPem }).verify({ body, signature: signatureHex });
  const key = createPublicKey(publicKeyPem);
  // The service signs the hex digest's bytes: a digest is right only if the signature verifies over it.
  const verifies = (digest) => verify('sha256', Buffer.from(digest), key, Buffer.from(signatureHex, 'hex'));
  const rebuilt = naiveCanonical(body);
  const naive = [
    { name: 'SHA-256 of the body as received', digest: sha256Hex(body) },
    { name: 'JSON.parse + sorted JSON.stringify(…, null, 2)', digest: sha256Hex(rebuilt) },
  ].map((n) => ({ ...n, verifies: verifies(n.digest) }));
  return {
    exact: { digest: exact.digest, profile: exact.profile },
    naive,
    differences: differingLines(exact.canonical.toString(), rebuilt.toString()),
  };
}

function differingLines(python, javascript, max = 6) {
  const a = python.split('\n');
  const b = javascript.split('\n');
  const out = [];
  for (let i = 0; i < Math.max(a.length, b.length) && out.length < max; i++) {
    if (a[i] !== b[i]) out.push([(a[i] ?? '').trim(), (b[i] ?? '').trim()]);
  }
  return out;
}
