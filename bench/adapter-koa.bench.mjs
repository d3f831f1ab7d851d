// Group `adapter-koa`: HTTP requests/s through @jobhook/koa against a hand-written verifying Koa route
// and a bare Koa POST route, measured with autocannon on loopback, in one run.
// The servers run in a worker thread (one core), autocannon in the main thread (the other); pool,
// load, rounds and reporting: http-bench.mjs.
// Run alone: `npx tsc -b && node bench/adapter-koa.bench.mjs` (imports the built packages).
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import getRawBody from 'raw-body';
import { createMemoryStore, createReceiver } from '@jobhook/core';
import { createKoaMiddleware } from '@jobhook/koa';
import { TARGET, appTable, listen, measureGroup, naiveVerifier, runAlone, serveApps } from './http-bench.mjs';
import { ratio, verdict } from './report.mjs';

export const description =
  'HTTP req/s: @jobhook/koa vs a hand-written verifying Koa route vs a bare Koa POST route (autocannon, 10 connections, RSA-3072, 1 KB body)';

const ROUNDS = 5;

export const NOTES = [
  'adapter     = app.use(createKoaMiddleware(receiver)), memory store, onEvent a no-op: raw-body read, the whole core pipeline (content type, lossless parse, canonical bytes, sha256, RSA verify, event shape, claim, handler, complete), JSON answer.',
  'hand-written = the naive recipe as a Koa route: raw-body, JSON.parse, keys sorted deep, JSON.stringify(…, null, 2), sha256 hex, crypto.verify with a cached KeyObject, 200/401. Not exact (1.0 → 1, 30-digit integers), no dedupe, no shape check: the speed baseline.',
  'bare        = a Koa POST route answering 200 {"ok":true} without reading the body: the framework + HTTP floor.',
  'pipeline stubbed = (diagnostic) createKoaMiddleware around a receiver whose handle() answers a fixed 200 at once: what the adapter itself (raw-body read, answer written) adds to bare.',
];

/** The servers worker's apps. */
function startApps(publicKeyPem) {
  const receiver = createReceiver({ publicKeys: publicKeyPem, store: createMemoryStore({ max: 1_000_000 }), onEvent: () => {} });
  const adapter = new Koa().use(createKoaMiddleware(receiver));

  const naive = naiveVerifier(publicKeyPem);
  const handWritten = new Koa().use(async (ctx) => {
    if (ctx.method !== 'POST') ctx.throw(405);
    const raw = await getRawBody(ctx.req, { limit: 1024 * 1024, length: ctx.request.length ?? null });
    const ok = naive.verify(raw, ctx.get('x-service-signature'));
    ctx.status = ok ? 200 : 401;
    ctx.body = ok ? { ok: true } : { error: 'invalid signature' };
  });

  const bare = new Koa().use((ctx) => {
    if (ctx.method !== 'POST') ctx.throw(405);
    ctx.body = { ok: true };
  });

  const answer = {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ ok: true, job_id: randomUUID(), duplicate: false }),
    outcome: { kind: 'handled', status: 200, durationMs: 0 },
  };
  // Admits every request: the adapter still reads the body (under the admission's limit) and writes the answer.
  const admission = { maxBytes: 1024 * 1024, signal: new AbortController().signal, receive: async () => answer, refuse: () => answer };
  const stub = {
    precheck: () => ({ admission }),
    handle: async () => answer,
    stats: () => receiver.stats(),
  };
  const stubbed = new Koa().use(createKoaMiddleware(stub));

  return {
    servers: { adapter: listen(adapter), handWritten: listen(handWritten), bare: listen(bare), stubbed: listen(stubbed) },
    stats: () => ({ receivers: { adapter: receiver.stats() }, handWrittenFailures: naive.failures }),
  };
}

/** @param {{ settings: { time: number, warmup: number }, log: (s: string) => void }} ctx */
export function run({ settings, log }) {
  return measureGroup({
    moduleUrl: import.meta.url,
    settings,
    log,
    apps: ['adapter', 'handWritten', 'bare', 'stubbed'],
    fresh: ['adapter'],
    rounds: ROUNDS,
    notes: NOTES,
    targetName: '@jobhook/koa / hand-written verifying Koa route (req/s)',
    tables: (r) => {
      const value = r.adapter.rps / r.handWritten.rps;
      const text = appTable(
        r,
        [
          ['@jobhook/koa', 'adapter'],
          ['hand-written verify', 'handWritten'],
          ['bare POST route', 'bare'],
          ['@jobhook/koa, pipeline stubbed', 'stubbed'],
        ],
        ['req/s', 'rounds min–max', 's', 'requests', 'p50 ms', 'p99 ms', 'vs hand-written'],
        'server',
      );
      const summary = `\n  adapter / hand-written = ${ratio(value)} (target ≥ ${TARGET.toFixed(2)}×: ${verdict(value, TARGET)}); adapter / bare = ${ratio(r.adapter.rps / r.bare.rps)}; stubbed / bare = ${ratio(r.stubbed.rps / r.bare.rps)}`;
      return { text, summary: [summary] };
    },
  });
}

await serveApps(startApps);
await runAlone(import.meta.url, { description, run });
