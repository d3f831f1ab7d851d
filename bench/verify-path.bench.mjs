// Group `verify-path`: the verify path on every payload of payloads.mjs against the hand-written
// recipe users compare it with (JSON.parse, keys sorted deep, JSON.stringify(v, null, 2), sha256,
// crypto.verify), RSA-2048. Two comparisons per payload, each interleaved:
// - verifier.verify() vs the recipe, called back to back (python body; compact body too);
// - receiver.handle() (memory store, a fresh job_id per call) vs the recipe wrapped in an async
//   function, both with 32 calls in flight (compareAsync).
// The recipe is not exact (1.0 → 1) and does no dedupe: it is the speed reference, so its own
// signatures are made over the digest it computes (otherwise its crypto.verify would fail).
import { constants, createHash, generateKeyPair, sign, verify } from 'node:crypto';
import { promisify } from 'node:util';
import { createMemoryStore, createReceiver, createVerifier } from '@jobhook/core';
import { signPayload } from '@jobhook/core/sign';
import { compareAsync } from './harness.mjs';
import { ops, ratio, table, withRme, logResult } from './report.mjs';
import { naiveCanonical } from './naive-recipe.mjs';

export const description =
  'verifier.verify() and receiver.handle() (32 in flight) vs the hand-written sorted JSON.stringify recipe, every payload, RSA-2048';

/** Minimum ratios: payloads of ≥ 30 KB, and the 1 KB webhook. */
export const TARGET_LARGE = 1.0;
export const TARGET_SMALL = 0.9;
const SMALL_BYTES = 30_000;
const KEY_BITS = 2048;
const IN_FLIGHT = 32;
const MAX_BODY = 16 * 2 ** 20;
/** Distinct signed deliveries per payload for the handle row (the receiver is replaced when the pool wraps). */
const POOL_SMALL = 1024;
const POOL_LARGE = 64;
const STYLES = ['python', 'compact'];
/**
 * compareAsync runs batches of at least 2 × 32 calls: ~1.5 s each for a 1 MB body, so the handle
 * row of such a payload takes fewer batches (each is still ≥ 64 calls; the time floor still holds).
 */
const LONG_BATCH_BYTES = 500_000;
const LONG_BATCH_SAMPLES = 6;
const PADDING = constants.RSA_PKCS1_PADDING;

export const NOTES = [
  'naive    = the hand-written recipe: JSON.parse(body.toString("utf8")), keys sorted deep (each object rebuilt from Object.keys(o).sort()), JSON.stringify(v, null, 2), sha256 hex, crypto.verify("sha256", Buffer.from(hex), { key: cachedKeyObject, padding: RSA_PKCS1_PADDING }, Buffer.from(signatureHex, "hex")). Not exact (1.0 → 1), no dedupe: the speed reference. Its signatures are made over the digest it computes, so it returns true.',
  `verifier = createVerifier({ publicKeys: pem, maxBodyBytes: 16 MiB }) once, then verifier.verify({ body, signature }): RSA public recover, one bounded parse, candidate canonical forms hashed as written, payload object.`,
  `handle   = receiver.handle({ method: "POST", headers, rawBody }) with a memory store and a no-op handler, ${IN_FLIGHT} calls in flight, against naive wrapped in an async function with ${IN_FLIGHT} in flight (naive (${IN_FLIGHT})). Every handle call carries a job_id of its own (a pool of ${POOL_SMALL.toLocaleString('en')} pre-signed variants for the 1 KB webhook, ${POOL_LARGE} for larger payloads; the receiver is replaced when the pool wraps) and must answer 200 handled; naive (${IN_FLIGHT}) cycles through the same bodies.`,
  `Payloads of ≥ ${(LONG_BATCH_BYTES / 1000).toLocaleString('en')} kB (stt-1mb): the handle row takes ≥ ${LONG_BATCH_SAMPLES} batches instead of the settings' minimum (a batch there is ≥ ${2 * IN_FLIGHT} calls, ~1.5 s); the time floor is unchanged.`,
  "Bodies: signPayload(body, key, { bodyStyle }).body (the payloads as Python writes them). The handle row uses the python body only (the service's). RSA-2048, e = 65537, generated at start.",
  `Targets: verifier/naive and handle/naive(${IN_FLIGHT}) ≥ ${TARGET_LARGE.toFixed(2)}× on payloads ≥ 30 KB, ≥ ${TARGET_SMALL.toFixed(2)}× on webhook-1kb.`,
];

/** The digest the naive recipe computes for a body. */
function naiveDigest(body) {
  return createHash('sha256').update(naiveCanonical(body)).digest('hex');
}

/** The naive recipe: true when the signature verifies. */
function naiveVerify(body, signatureHex, key) {
  const digest = naiveDigest(body);
  return verify('sha256', Buffer.from(digest), { key, padding: PADDING }, Buffer.from(signatureHex, 'hex'));
}

function rsaSignHex(privateKey, digestHex) {
  return sign('sha256', Buffer.from(digestHex, 'latin1'), { key: privateKey, padding: PADDING }).toString('hex');
}

/** The signature header, lowercase, plus the content type: what receiver.handle reads. */
function requestHeaders(signed) {
  const headers = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(signed.headers)) headers[k.toLowerCase()] = v;
  return headers;
}

/**
 * `count` deliveries of `body` (python style) each with its own job_id: the `"job_id": "<uuid>"` of
 * the body with the uuid's last 12 hex digits replaced (same length, so the body is exactly what
 * json.dumps writes for the payload with that job_id), signed by the service and by the naive recipe.
 */
function variantPool(body, jobId, count, privateKey) {
  const needle = Buffer.from(`"job_id": "${jobId}"`);
  const at = body.indexOf(needle);
  if (at < 0 || body.indexOf(needle, at + 1) >= 0) throw new Error(`verify-path: job_id ${jobId} not found exactly once in the body`);
  const idAt = at + needle.length - 1 - 12; // the last 12 hex digits of the uuid
  const pool = [];
  for (let i = 0; i < count; i++) {
    const variant = Buffer.from(body);
    variant.write((0xb0000000000 + i).toString(16).padStart(12, '0'), idAt, 'latin1');
    const signed = signPayload(variant, privateKey, { bodyStyle: 'python' });
    if (!signed.body.equals(variant)) throw new Error('verify-path: signPayload re-wrote a job_id variant');
    const nd = naiveDigest(variant);
    pool.push({
      body: variant,
      headers: requestHeaders(signed),
      naiveSignature: nd === signed.digest ? signed.signature : rsaSignHex(privateKey, nd),
    });
  }
  return pool;
}

/** By payload (its python body), so both body styles of a payload share a target. */
const targetFor = (payload) => (payload.bodies.python.length >= SMALL_BYTES ? TARGET_LARGE : TARGET_SMALL);

export async function run({ compare, settings, log, payloads }) {
  log(`  generating an RSA-${KEY_BITS} key…`);
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: KEY_BITS, publicExponent: 65537 });
  const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  const verifier = createVerifier({ publicKeys: pem, maxBodyBytes: MAX_BODY });

  const rows = [];
  for (const payload of payloads) {
    for (const style of STYLES) {
      const signed = signPayload(payload.bodies[style], privateKey, { bodyStyle: style });
      if (!signed.body.equals(payload.bodies[style]))
        log(`  warning: signPayload re-wrote the ${payload.name} ${style} body; measuring its body`);
      const body = signed.body;
      const signature = signed.signature;
      const nd = naiveDigest(body);
      const naiveSignature = nd === signed.digest ? signature : rsaSignHex(privateKey, nd);
      const target = targetFor(payload);

      // Each task must succeed once, or it would measure a failure path.
      if (naiveVerify(body, naiveSignature, publicKey) !== true)
        throw new Error(`verify-path/${payload.name}/${style}: naive did not verify`);
      const checked = verifier.verify({ body, signature });
      if (checked.profile !== 'python' || checked.payload.job_id !== payload.value.job_id) {
        throw new Error(`verify-path/${payload.name}/${style}: verifier gave profile ${checked.profile}`);
      }

      log(`  ${payload.name} (${style}, ${body.length.toLocaleString('en')} B): verifier vs naive…`);
      const [naive, ours] = compare(
        [
          { name: 'naive', fn: () => naiveVerify(body, naiveSignature, publicKey), bytes: body.length },
          { name: 'verifier', fn: () => verifier.verify({ body, signature }), bytes: body.length },
        ],
        settings,
      );
      const row = {
        payload: payload.name,
        style,
        bytes: body.length,
        target,
        naive,
        verifier: ours,
        verifierVsNaive: ours.opsPerSec / naive.opsPerSec,
      };

      if (style === 'python') {
        const poolSize = target === TARGET_LARGE ? POOL_LARGE : POOL_SMALL;
        log(`  ${payload.name}: signing ${poolSize} job_id variants…`);
        const pool = variantPool(body, payload.value.job_id, poolSize, privateKey);
        let receiver;
        const freshReceiver = () => {
          receiver = createReceiver({
            publicKeys: pem,
            store: createMemoryStore({ max: poolSize * 2 }),
            maxBodyBytes: MAX_BODY,
            onEvent: () => {},
          });
        };
        freshReceiver();
        let h = 0;
        let n = 0;
        const handle = async () => {
          if (h === poolSize) {
            h = 0;
            freshReceiver();
          }
          const d = pool[h++];
          const res = await receiver.handle({ method: 'POST', headers: d.headers, rawBody: d.body });
          if (res.status !== 200 || res.outcome.kind !== 'handled')
            throw new Error(`verify-path/${payload.name} handle: ${res.status} ${res.outcome.kind} ${res.body}`);
        };
        const naiveAsync = async () => {
          const d = pool[n++ % poolSize];
          if (!naiveVerify(d.body, d.naiveSignature, publicKey))
            throw new Error(`verify-path/${payload.name}: naive did not verify a variant`);
        };
        log(`  ${payload.name}: handle vs naive, ${IN_FLIGHT} in flight…`);
        const [naiveFlight, handleFlight] = await compareAsync(
          [
            { name: `naive (${IN_FLIGHT})`, fn: naiveAsync, concurrency: IN_FLIGHT },
            { name: `handle (${IN_FLIGHT})`, fn: handle, concurrency: IN_FLIGHT },
          ],
          body.length >= LONG_BATCH_BYTES ? { ...settings, minSamples: Math.min(settings.minSamples, LONG_BATCH_SAMPLES) } : settings,
        );
        Object.assign(row, {
          naiveFlight,
          handle: handleFlight,
          handleVsNaive: handleFlight.opsPerSec / naiveFlight.opsPerSec,
          pool: poolSize,
        });
      }
      rows.push(row);
    }
  }

  const dash = '—';
  const text = table(
    [
      { header: 'payload', align: 'left' },
      { header: 'body', align: 'left' },
      { header: 'bytes' },
      { header: 'naive ops/s' },
      { header: 'verifier ops/s' },
      { header: 'verifier/naive' },
      { header: `naive ops/s (${IN_FLIGHT} in flight)` },
      { header: `handle ops/s (${IN_FLIGHT} in flight)` },
      { header: `handle/naive(${IN_FLIGHT})` },
      { header: 'target' },
      { header: 'met?' },
    ],
    rows.map((r) => {
      const missed = [];
      if (r.verifierVsNaive < r.target) missed.push('verifier');
      if (r.handle && r.handleVsNaive < r.target) missed.push('handle');
      return [
        r.payload,
        r.style,
        r.bytes.toLocaleString('en'),
        withRme(ops(r.naive.opsPerSec), r.naive.rme),
        withRme(ops(r.verifier.opsPerSec), r.verifier.rme),
        ratio(r.verifierVsNaive),
        r.handle ? withRme(ops(r.naiveFlight.opsPerSec), r.naiveFlight.rme) : dash,
        r.handle ? withRme(ops(r.handle.opsPerSec), r.handle.rme) : dash,
        r.handle ? ratio(r.handleVsNaive) : dash,
        `≥${r.target.toFixed(2)}×`,
        missed.length === 0 ? 'met' : `MISSED (${missed.join(', ')})`,
      ];
    }),
  );
  logResult(log, text, NOTES);

  const targets = [];
  for (const r of rows) {
    targets.push({
      name: `verify-path ${r.payload} (${r.style}) verifier/naive`,
      value: r.verifierVsNaive,
      min: r.target,
      met: r.verifierVsNaive >= r.target,
    });
    if (r.handle) {
      targets.push({
        name: `verify-path ${r.payload} handle/naive (${IN_FLIGHT} in flight)`,
        value: r.handleVsNaive,
        min: r.target,
        met: r.handleVsNaive >= r.target,
      });
    }
  }
  return { text, notes: NOTES, data: { keyBits: KEY_BITS, inFlight: IN_FLIGHT, rows }, targets };
}
