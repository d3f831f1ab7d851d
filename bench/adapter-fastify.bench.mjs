// Group `adapter-fastify`: HTTP requests/s through Fastify on loopback (autocannon, 10 connections,
// ~1 KB webhook, RSA-3072, memory store) for
//   (a) adapter      app.register(jobhookFastify(receiver)): the whole pipeline, every job_id new;
//   (b) hand-written a Fastify route with a route-scoped buffer parser doing the naive recipe:
//                    JSON.parse, sorted-keys JSON.stringify(…, null, 2), sha256 hex, crypto.verify
//                    with a cached KeyObject;
//   (c) bare         the same route-scoped buffer parser and a route answering 200: Fastify's floor.
//   (d) diagnostic   the same raw-body route calling receiver.handle by hand: adapter / (d) is what the
//                    plugin itself costs.
// The apps run in one worker thread (one core), autocannon in the main thread (the other core); pool,
// load, rounds and reporting: http-bench.mjs.
//
//   node bench/adapter-fastify.bench.mjs            (alone; needs the build: npx tsc -b)
//   node --expose-gc bench/run.mjs adapter-fastify  (as a group)
import { createMemoryStore, createReceiver } from '@jobhook/core';
import { jobhookFastify } from '@jobhook/fastify';
import Fastify from 'fastify';
import { HOST, PATH, appTable, measureGroup, naiveVerifier, ratioTable, runAlone, serveApps } from './http-bench.mjs';

export const description =
  'HTTP req/s through Fastify (autocannon, 10 connections, 1 KB, RSA-3072): @jobhook/fastify vs a hand-written verifying route vs a bare 200 route';

const ROUNDS = 2;

export const NOTES = [
  'adapter      = app.register(jobhookFastify(receiver)) with createReceiver({ publicKeys, store: createMemoryStore(), onEvent }): route-scoped raw-body parser, content type, signature, lossless parse, python canonical form, sha256, RSA verify, payload check, claim, handler (empty), complete, JSON answer.',
  "hand-written = the naive recipe in an encapsulated context of the same Fastify version: addContentTypeParser('*', { parseAs: 'buffer' }), JSON.parse, sorted-keys JSON.stringify(v, null, 2), sha256 hex, crypto.verify with a cached KeyObject, 200. Not exact (1.0 becomes 1, no dedupe, no checks), but the speed to match.",
  'bare         = the same route-scoped buffer parser and a handler answering 200 {"ok":true}: Fastify routing, body read and Node HTTP only.',
  'receiver.handle in a route = a diagnostic: the same raw-body route as (c) calling receiver.handle and writing its answer, own memory store, every job_id new to it too. adapter / this = the cost of the plugin itself (≈ 1.00×); the rest of the gap to (b) is the pipeline in core.',
];

/** An app whose PATH route gets the body as a Buffer from a route-scoped parser, as the plugin does. */
function rawBodyApp(handler) {
  const app = Fastify();
  app.register(async (scoped) => {
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scoped.post(PATH, handler);
  });
  return app;
}

/** The servers worker's apps. */
function startApps(publicKeyPem) {
  const JSON_TYPE = 'application/json; charset=utf-8';
  let handlerRuns = 0;
  const newReceiver = () =>
    createReceiver({ publicKeys: publicKeyPem, store: createMemoryStore({ max: 1_000_000 }), onEvent: () => void handlerRuns++ });

  const receiver = newReceiver();
  const adapter = Fastify();
  adapter.register(jobhookFastify(receiver, { path: PATH }));

  const naive = naiveVerifier(publicKeyPem);
  const handWritten = rawBodyApp(async (request, reply) => {
    if (naive.verify(request.body, request.headers['x-service-signature'])) return reply.code(200).type(JSON_TYPE).send('{"ok":true}');
    return reply.code(401).type(JSON_TYPE).send('{"error":"signature"}');
  });

  const bare = rawBodyApp(async (_request, reply) => reply.code(200).type(JSON_TYPE).send('{"ok":true}'));

  // Diagnostic: the pipeline called by hand from the same raw-body route, its own store (so the
  // pool's job_ids are new to it too). adapter / direct = what the plugin itself costs.
  const directReceiver = newReceiver();
  const direct = rawBodyApp(async (request, reply) => {
    const answer = await directReceiver.handle({ method: request.method, headers: request.headers, rawBody: request.body });
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });

  const listen = (app) => app.listen({ port: 0, host: HOST }).then(() => app.server);
  return {
    servers: { adapter: listen(adapter), handWritten: listen(handWritten), bare: listen(bare), direct: listen(direct) },
    stats: () => ({
      receivers: { adapter: receiver.stats(), direct: directReceiver.stats() },
      handlerRuns,
      handWrittenFailures: naive.failures,
    }),
  };
}

/** @param {{ settings: { time: number, warmup: number }, log: (s: string) => void }} ctx */
export function run({ settings, log }) {
  return measureGroup({
    moduleUrl: import.meta.url,
    settings,
    log,
    apps: ['adapter', 'handWritten', 'bare', 'direct'],
    fresh: ['adapter', 'direct'],
    rounds: ROUNDS,
    notes: NOTES,
    targetName: 'fastify adapter / hand-written verifying route (req/s)',
    tables: (r) => {
      const apps = appTable(
        r,
        [
          ['(a) @jobhook/fastify', 'adapter'],
          ['(b) hand-written verify', 'handWritten'],
          ['(c) bare 200', 'bare'],
          ['(d) receiver.handle in a route', 'direct'],
        ],
        ['req/s', 'p50 ms', 'p99 ms', 'requests', 's'],
      );
      return { text: [apps, '', ratioTable(r, [['adapter / receiver.handle in a route', r.adapter.rps / r.direct.rps]])].join('\n') };
    },
  });
}

await serveApps(startApps);
await runAlone(import.meta.url, { description, run });
