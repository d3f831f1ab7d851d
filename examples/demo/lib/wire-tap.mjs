// A pass-through HTTP proxy between the sender and the receiver. It keeps each delivery's exact
// bytes, headers and answer (so the demo can show what the receiver got, and replay a real delivery
// tampered), and its /outage-once path answers 503 to its first request, to show a retry.
import { createServer, request } from 'node:http';

/** Requests to this path (any suffix) get 503 the first time, then go through. */
export const OUTAGE_ONCE_PATH = '/outage-once';

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];

function withoutHopHeaders(headers) {
  const out = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

/**
 * @param {{ targetUrl: string }} options every request is forwarded to this URL, whatever its path.
 */
export async function startWireTap({ targetUrl }) {
  const target = new URL(targetUrl);
  /** @type {{ jobId: string | null, path: string, body: Buffer, headers: Record<string, any>, status: number | null, answer: string, answeredBy: 'receiver' | 'tap' }[]} */
  const deliveries = [];
  let outageUsed = false;

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let jobId = null;
      try {
        jobId = JSON.parse(body.toString('utf8')).job_id ?? null; // only to label the record
      } catch {
        jobId = null;
      }
      const record = { jobId, path: req.url ?? '/', body, headers: req.headers, status: null, answer: '', answeredBy: 'receiver' };
      deliveries.push(record);

      if (!outageUsed && record.path.startsWith(OUTAGE_ONCE_PATH)) {
        outageUsed = true;
        record.status = 503;
        record.answeredBy = 'tap';
        record.answer = JSON.stringify({ error: { code: 'DEMO_OUTAGE', message: 'the wire tap plays a receiver outage' } });
        res.writeHead(503, { 'content-type': 'application/json' }).end(record.answer);
        return;
      }

      const headers = { ...withoutHopHeaders(req.headers), host: target.host, 'content-length': String(body.length) };
      // agent: false: one connection per delivery, so nothing stays open to the receiver.
      const upstream = request(target, { method: req.method, headers, agent: false }, (answer) => {
        record.status = answer.statusCode ?? null;
        res.writeHead(answer.statusCode ?? 502, withoutHopHeaders(answer.headers));
        const answerChunks = [];
        answer.on('data', (chunk) => {
          answerChunks.push(chunk);
          res.write(chunk);
        });
        answer.on('end', () => {
          record.answer = Buffer.concat(answerChunks).toString('utf8');
          res.end();
        });
      });
      upstream.on('error', (err) => {
        record.status = 502;
        record.answeredBy = 'tap';
        record.answer = err.message;
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
      upstream.end(body);
    });
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());

  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    /** The deliveries of one job, in arrival order. */
    deliveriesOf: (jobId) => deliveries.filter((d) => d.jobId === jobId),
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections(); // the sender's keep-alive sockets
      });
    },
  };
}
