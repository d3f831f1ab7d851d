// Group `adapter-express`: HTTP requests/s through Express on loopback (autocannon, 10 connections,
// ~1 KB webhook, RSA-3072, memory store) for
//   (a) adapter      app.post(path, createExpressMiddleware(...)): the whole pipeline, every job_id new;
//   (b) hand-written app.post(path, naive verifying route): raw-body, JSON.parse, sorted-keys
//                    JSON.stringify(…, null, 2), sha256 hex, crypto.verify with a cached KeyObject;
//   (c) bare         app.post(path, (req, res) => 200), body not even read: Express's floor.
// The three Express apps run in one worker thread (one core), autocannon in the main thread (the
// other core); pool, load, rounds and reporting: http-bench.mjs.
//
//   node bench/adapter-express.bench.mjs          (alone; needs the build: npx tsc -b)
//   node --expose-gc bench/run.mjs adapter-express (as a group)
import { createExpressMiddleware } from '@jobhook/express';
import express from 'express';
import getRawBody from 'raw-body';
import { PATH, appTable, listen, measureGroup, naiveVerifier, ratioTable, runAlone, serveApps } from './http-bench.mjs';

export const description =
  'HTTP req/s through Express (autocannon, 10 connections, 1 KB, RSA-3072): @jobhook/express vs a hand-written verifying route vs a bare 200 route';

const ROUNDS = 2;

export const NOTES = [
  'adapter      = app.post(path, createExpressMiddleware({ publicKeys, onEvent }) (the default memory store)): raw body (raw-body), content type, signature, lossless parse, python canonical form, sha256, RSA verify, payload check, claim, handler (empty), complete, JSON answer.',
  'hand-written = the naive recipe on the same Express: raw-body, JSON.parse, sorted-keys JSON.stringify(v, null, 2), sha256 hex, crypto.verify with a cached KeyObject, 200. Not exact (1.0 becomes 1, no dedupe, no checks), but the speed to match.',
  'bare         = app.post(path, (req, res) => res.writeHead(200).end(...)): Express routing and Node HTTP only; the body is not read.',
  '"by server busy time" = hand-written server µs/req ÷ adapter server µs/req.',
];

/** The servers worker's apps. */
function startApps(publicKeyPem) {
  const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
  let handlerRuns = 0;

  const adapter = express();
  // The receiver's default store: createMemoryStore() (100,000 done jobs remembered).
  const middleware = createExpressMiddleware({ publicKeys: publicKeyPem, onEvent: () => void handlerRuns++ });
  adapter.post(PATH, middleware);

  const naive = naiveVerifier(publicKeyPem);
  const handWritten = express();
  handWritten.post(PATH, async (req, res) => {
    const raw = await getRawBody(req, { limit: 1_048_576, length: req.headers['content-length'] });
    if (naive.verify(raw, req.headers['x-service-signature'])) res.writeHead(200, JSON_HEADERS).end('{"ok":true}');
    else res.writeHead(401, JSON_HEADERS).end('{"error":"signature"}');
  });

  const bare = express();
  bare.post(PATH, (_req, res) => {
    res.writeHead(200, JSON_HEADERS).end('{"ok":true}');
  });

  return {
    servers: { adapter: listen(adapter), handWritten: listen(handWritten), bare: listen(bare) },
    stats: () => ({ receivers: { adapter: middleware.receiver.stats() }, handlerRuns, handWrittenFailures: naive.failures }),
  };
}

/** @param {{ settings: { time: number, warmup: number }, log: (s: string) => void }} ctx */
export function run({ settings, log }) {
  return measureGroup({
    moduleUrl: import.meta.url,
    settings,
    log,
    apps: ['adapter', 'handWritten', 'bare'],
    fresh: ['adapter'],
    rounds: ROUNDS,
    notes: NOTES,
    targetName: 'express adapter / hand-written verifying route (req/s)',
    tables: (r) => {
      const busyRatio = r.handWritten.serverUsPerRequest / r.adapter.serverUsPerRequest;
      const apps = appTable(
        r,
        [
          ['(a) @jobhook/express', 'adapter'],
          ['(b) hand-written verify', 'handWritten'],
          ['(c) bare 200', 'bare'],
        ],
        ['req/s', 'server µs/req', 'p50 ms', 'p99 ms', 'requests', 's'],
      );
      return {
        text: [apps, '', ratioTable(r, [['adapter / hand-written, by server busy time', busyRatio]])].join('\n'),
        data: { serverRatio: busyRatio },
      };
    },
  });
}

await serveApps(startApps);
await runAlone(import.meta.url, { description, run });
