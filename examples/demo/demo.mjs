// The jobhook demo: sign a webhook as the service does, show why a naive verifier fails, verify it
// exactly, deliver it to a Fastify receiver over HTTP (handled once, duplicates acknowledged,
// tampering refused), and check the public signature vectors. (The end-to-end demo with the
// reference sender replaces the hand-made deliveries once that package exists.)
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { createVerifier, JobhookError, rawJson, signPayload } from '@jobhook/core';
import { jobhook } from '@jobhook/fastify';

const here = dirname(fileURLToPath(import.meta.url));
const step = (n, text) => console.log(`\n\x1b[1m${n}. ${text}\x1b[0m`);

step(1, 'The service signs a finished job (RSA PKCS#1 v1.5 / SHA-256 over the canonical JSON digest)');
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
const payload = {
  event: 'async_job_completed',
  job_id: '5f0c3a52-9d1e-4b8e-8f43-2a7c9b1d6e10',
  status: 'success',
  feature: 'ocr',
  subfeature: 'ocr_async',
  provider: 'amazon',
  model: null,
  created_at: '2026-11-22T09:30:00.123456+00:00',
  finished_at: '2026-11-22T09:30:04.654321+00:00',
  output: { raw_text: 'Reçu n° 42 — 東京 😀', pages: 1 },
  user_parameters: { order: 'A-17', weight: rawJson('1.0'), ratio: 1e-7, big: 123456789012345678901234567890n },
};
const signed = signPayload(payload, privateKey); // body as Python's json.dumps sends it
console.log(`   body sent     ${signed.body.toString().slice(0, 96)}…`);
console.log(`   signature     ${signed.signature.slice(0, 48)}… (${signed.signature.length / 2} bytes)`);

step(2, 'A receiver re-creates the canonical bytes from the body it got');
const naive = Buffer.from(JSON.stringify(sortKeys(JSON.parse(signed.body.toString())), null, 2));
const sha = (b) => createHash('sha256').update(b).digest('hex');
console.log(`   signed digest                  ${signed.digest}`);
console.log(`   JSON.parse + sorted stringify  ${sha(naive)}  ${sha(naive) === signed.digest ? 'match' : 'MISMATCH'}`);
for (const [ours, theirs] of diffLines(signed.canonical.toString(), naive.toString())) {
  console.log(`     python: ${ours.trim().padEnd(44)} javascript: ${theirs.trim()}`);
}

step(3, 'jobhook verifies it exactly');
const verifier = createVerifier({ keys: publicKey.export({ type: 'pkcs1', format: 'pem' }) });
const result = verifier.verify({ body: signed.body, signature: signed.signature });
console.log(`   verified with profile "${result.profile}", key ${result.keyId.slice(0, 16)}…`);
console.log(`   user_parameters.big = ${result.payload.user_parameters.big}n (exact bigint)`);

step(4, 'A tampered body is refused');
try {
  verifier.verify({ body: Buffer.from(signed.body.toString().replace('A-17', 'A-18')), signature: signed.signature });
} catch (err) {
  if (!(err instanceof JobhookError)) throw err;
  console.log(`   ${err.status} ${err.code}: ${err.message}`);
}

step(5, 'A Fastify receiver (@jobhook/fastify) gets the webhook over HTTP');
const handled = [];
const app = Fastify();
await app.register(jobhook, {
  path: '/webhooks/jobs',
  publicKeys: publicKey,
  onEvent: async (event) => {
    handled.push(event.job_id);
    await new Promise((resolve) => setTimeout(resolve, 100)); // some work, so deliveries overlap
  },
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
const url = `${address}/webhooks/jobs`;
const post = async (body, headers = signed.headers) => {
  const res = await fetch(url, { method: 'POST', body, headers });
  const answer = await res.json();
  return `${res.status} ${answer.error?.code ?? (answer.duplicate ? 'duplicate' : 'handled')}`;
};
console.log(`   first delivery          → ${await post(signed.body)}`);
console.log(`   same job_id again       → ${await post(signed.body)} (handler not run again)`);
const again = signPayload({ ...payload, job_id: '0d4f7c9e-6a1b-4e2f-9c3d-8b5a7e6f1a20' }, privateKey);
const burst = await Promise.all(Array.from({ length: 5 }, () => post(again.body, again.headers)));
console.log(`   5 deliveries at once    → ${burst.sort().join(', ')} (503 = retry later)`);
console.log(`   tampered body           → ${await post(Buffer.from(signed.body.toString().replace('A-17', 'A-18')))}`);
console.log(`   handler ran ${handled.length} times for ${new Set(handled).size} jobs`);
await app.close();
if (handled.length !== 2) process.exitCode = 1;

step(6, 'The public signature vectors (../shared/vectors)');
const vectorsDir = process.env.JOBHOOK_VECTORS_DIR ?? resolve(here, '../../../shared/vectors');
if (existsSync(resolve(vectorsDir, 'vectors.jsonl'))) {
  const ring = createVerifier({ keys: readFileSync(resolve(vectorsDir, 'keys/main.public.pkcs1.pem')) });
  let agree = 0;
  let total = 0;
  for (const line of readFileSync(resolve(vectorsDir, 'vectors.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const c = JSON.parse(line);
    let got;
    try {
      ring.verify({ body: Buffer.from(c.body_b64, 'base64'), signature: c.signature });
      got = 'valid';
    } catch (err) {
      got = err.code.startsWith('ERR_SIGNATURE') ? 'invalid' : 'malformed';
    }
    total++;
    if (got === c.expect || (c.expect === 'not-valid' && got !== 'valid') || (c.expect === 'valid-or-malformed' && got !== 'invalid')) agree++;
  }
  console.log(`   ${agree}/${total} vectors agree with their expectation`);
  if (agree !== total) process.exitCode = 1;
} else {
  console.log(`   (no vectors at ${vectorsDir}; set JOBHOOK_VECTORS_DIR)`);
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}

function diffLines(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  const out = [];
  for (let i = 0; i < Math.max(x.length, y.length) && out.length < 4; i++) {
    if (x[i] !== y[i]) out.push([x[i] ?? '', y[i] ?? '']);
  }
  return out;
}
