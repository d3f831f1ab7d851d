// The `availability` group's receiver, a child process of its own (so its RSS is its own):
//   node --expose-gc bench/avail-receiver.mjs <express|koa|fastify|fetch|fetch-ip> <public key file> <path>
// One adapter with its defaults (default memory store, no recipientSecret), listening on
// 127.0.0.1:<free port> at PATH, whose handler records the job ids it ran for. `fetch` is
// createFetchHandler on node:http through a bridge that hands it a Request whose body is a
// pull-based ReadableStream over the IncomingMessage: nothing is read before the handler pulls it;
// `fetch-ip` the same with the `clientAddress` option fed the socket's peer address.
// IPC: → { type: 'ready', port }; 'baseline' → gc, then the RSS is the baseline and the peak
// restarts from it (sampled every 250 ms); 'stats' → { type: 'stats', rss…, handled, receiverStats }.
// Exits when the channel closes.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const HOST = '127.0.0.1';
const SAMPLE_MS = 250;

const [adapter, publicKeyPath, PATH] = process.argv.slice(2);
const publicKeys = readFileSync(publicKeyPath, 'utf8');
const handled = new Map(); // job_id → handler runs
const options = {
  publicKeys,
  onEvent: (event) => {
    handled.set(event.job_id, (handled.get(event.job_id) ?? 0) + 1);
  },
};

/** node:http → Fetch bridge: a Request whose body is pulled from `req` one chunk per read, never ahead. */
function fetchBridge(handler, passAddress) {
  return async (req, res) => {
    const chunks = req[Symbol.asyncIterator]();
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const body = hasBody
      ? new ReadableStream(
          {
            async pull(controller) {
              const { value, done } = await chunks.next();
              if (done) controller.close();
              else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
            },
            async cancel() {
              // Stop pulling; the connection is closed after the answer (below) rather than drained.
            },
          },
          { highWaterMark: 0 },
        )
      : null;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    let response;
    try {
      const request = new Request(`http://${HOST}${req.url}`, { method: req.method, headers, body, duplex: 'half', signal: abort.signal });
      // fetch-ip: the peer's address as a platform argument, the way Bun's server.requestIP(req) or
      // Deno's info.remoteAddr reach a Fetch handler.
      response = await (passAddress ? handler(request, req.socket.remoteAddress) : handler(request));
    } catch {
      response = new Response('{"error":{"code":"ERR_BRIDGE","message":"bridge failure"}}', { status: 500 });
    }
    if (res.destroyed) return;
    const bytes = Buffer.from(await response.arrayBuffer());
    const out = Object.fromEntries(response.headers);
    if (!req.complete) out.connection = 'close';
    res.writeHead(response.status, out);
    res.end(bytes);
  };
}

async function start() {
  let server;
  let receiver;
  if (adapter === 'express') {
    const { default: express } = await import('express');
    const { createExpressMiddleware } = await import('@jobhook/express');
    const middleware = createExpressMiddleware(options);
    receiver = middleware.receiver;
    const app = express();
    app.post(PATH, middleware);
    server = http.createServer(app);
  } else if (adapter === 'koa') {
    const { default: Koa } = await import('koa');
    const { createKoaMiddleware } = await import('@jobhook/koa');
    const middleware = createKoaMiddleware(options, { path: PATH });
    receiver = middleware.receiver;
    server = http.createServer(new Koa().use(middleware).callback());
  } else if (adapter === 'fastify') {
    const { default: Fastify } = await import('fastify');
    const { jobhookFastify } = await import('@jobhook/fastify');
    const plugin = jobhookFastify(options, { path: PATH });
    receiver = plugin.receiver;
    const app = Fastify();
    app.register(plugin);
    await app.listen({ host: HOST, port: 0 });
    server = app.server;
  } else if (adapter === 'fetch') {
    const { createFetchHandler } = await import('@jobhook/core');
    const handler = createFetchHandler(options, { path: PATH });
    receiver = handler.receiver;
    server = http.createServer(fetchBridge(handler, false));
  } else if (adapter === 'fetch-ip') {
    const { createFetchHandler } = await import('@jobhook/core');
    const handler = createFetchHandler(options, { path: PATH, clientAddress: (_request, address) => address });
    receiver = handler.receiver;
    server = http.createServer(fetchBridge(handler, true));
  } else {
    throw new Error(`unknown adapter ${adapter} (express, koa, fastify, fetch)`);
  }
  if (!server.listening) await new Promise((resolve) => server.listen(0, HOST, resolve));

  let baseline = process.memoryUsage.rss();
  let peak = baseline;
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, SAMPLE_MS);

  process.on('message', (message) => {
    if (message?.type === 'baseline') {
      globalThis.gc?.();
      baseline = process.memoryUsage.rss();
      peak = baseline;
      process.send({ type: 'baseline', rss: baseline });
    } else if (message?.type === 'stats') {
      const rss = process.memoryUsage.rss();
      peak = Math.max(peak, rss);
      process.send({
        type: 'stats',
        rssBaseline: baseline,
        rssPeak: peak,
        rssNow: rss,
        handled: Object.fromEntries(handled),
        receiverStats: receiver?.stats?.() ?? null,
      });
    }
  });
  process.once('disconnect', () => process.exit(0));
  process.send({ type: 'ready', port: server.address().port });
}

start().catch((err) => {
  process.send?.({ type: 'error', message: String(err?.stack ?? err) });
  process.exit(1);
});
