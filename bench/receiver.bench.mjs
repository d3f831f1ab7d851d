// Group `receiver`: receiver.handle() (the whole receive pipeline with a memory store) on the 1 KB
// webhook with a 3072-bit key, against what it cannot avoid: verifier.verify() + the event shape
// check, in the same run. Each handle() call carries a new job_id, so every call is a real
// claim → handler → complete, never a cheap duplicate.
import { generateKeyPairSync } from 'node:crypto';
import { createMemoryStore, createReceiver, createVerifier, validateEvent } from '@jobhook/core';
import { signPayload } from '@jobhook/core/sign';
import { buildTestEvent } from '@jobhook/core/testing';
import { compareAsync } from './harness.mjs';
import { ops, ratio, table, verdict, withRme, logResult } from './report.mjs';

export const description = 'receiver.handle() vs verify + shape check alone, 1 KB webhook, RSA-3072, memory store';
export const TARGET = 0.9;
const POOL = 8_000;

export const NOTES = [
  'handle      = receiver.handle({ method, headers, rawBody }): content type, headers, parse, canonicalize, sha256, RSA verify, payload, shape check, claim, handler (a no-op), complete, JSON answer.',
  'verify+shape = verifier.verify({ body, signature }) then validateEvent(payload): the same crypto and parsing, no store, no answer.',
  `Both sides draw from one pool of ${POOL.toLocaleString('en')} distinct signed deliveries, cycling; the receiver's memory store is replaced when the pool wraps so no call is a duplicate.`,
];

export async function run({ settings, log }) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
  const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  log(`  signing ${POOL.toLocaleString('en')} deliveries…`);
  const pool = [];
  for (let i = 0; i < POOL; i++) {
    // ~1 KB, like the canonicalize and verify groups' webhook: OCR-ish output, unicode, floats.
    const event = buildTestEvent({
      output: {
        raw_text: 'Facture n° 2026-11-22 — Café Crème, 2 × 3,50 € — 東京 📄 '.repeat(5),
        pages: 1,
        confidence: 0.9876543,
        boxes: [
          [0.1, 0.2, 0.35, 0.05],
          [0.12, 0.31, 0.4, 0.05],
        ],
      },
      user_parameters: {
        order: `A-${i}`,
        note: 'commande n°4821 — café crème ☕',
        weight: 1.0,
        customer: { id: 1234567, tier: 'gold', tags: ['vip', 'eu'] },
      },
    });
    const signed = signPayload(event, privateKey);
    const headers = { 'content-type': 'application/json' };
    for (const [k, v] of Object.entries(signed.headers)) headers[k.toLowerCase()] = v;
    pool.push({ body: signed.body, signature: signed.signature, headers });
  }
  const bytes = pool[0].body.length;
  let receiver;
  const freshReceiver = () => {
    receiver = createReceiver({ publicKeys: pem, store: createMemoryStore({ max: POOL * 2 }), onEvent: () => {} });
  };
  freshReceiver();
  const verifier = createVerifier({ publicKeys: pem });
  let h = 0;
  let v = 0;
  const handle = async () => {
    if (h === POOL) {
      h = 0;
      freshReceiver();
    }
    const d = pool[h++];
    const res = await receiver.handle({ method: 'POST', headers: d.headers, rawBody: d.body });
    if (res.status !== 200 || res.outcome.kind !== 'handled') throw new Error(`receiver bench: ${res.status} ${res.body}`);
  };
  const verifyShape = async () => {
    const d = pool[v++ % POOL];
    validateEvent(verifier.verify({ body: d.body, signature: d.signature }).payload);
  };
  const [ours, base] = await compareAsync(
    [
      { name: 'handle', fn: handle, concurrency: 1 },
      { name: 'verify+shape', fn: verifyShape, concurrency: 1 },
    ],
    settings,
  );
  const r = ours.opsPerSec / base.opsPerSec;
  const text = table(
    [
      { header: 'payload', align: 'left' },
      { header: 'bytes' },
      { header: 'handle ops/s' },
      { header: 'verify+shape ops/s' },
      { header: 'handle/verify+shape' },
      { header: `≥${TARGET.toFixed(2)}×?` },
      { header: 'µs over verify+shape' },
    ],
    [
      [
        'webhook-1kb (python body)',
        bytes.toLocaleString('en'),
        withRme(ops(ours.opsPerSec), ours.rme),
        withRme(ops(base.opsPerSec), base.rme),
        ratio(r),
        verdict(r, TARGET),
        ((ours.nsPerOp - base.nsPerOp) / 1000).toFixed(1),
      ],
    ],
  );
  logResult(log, text, NOTES);
  return {
    text,
    notes: NOTES,
    data: { ours, base, ratio: r, bytes },
    targets: [{ name: 'receiver handle/verify+shape (RSA-3072)', value: r, min: TARGET, met: r >= TARGET }],
  };
}
