// A small HTTP proxy for the end-to-end and fault tests: round-robin over receiver instances, and a
// fault plan that answers some requests itself (500), holds them past the sender's attempt timeout,
// or resets the connection, before anything reaches a receiver.
import { request as httpRequest, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the proxy does with one request. */
export type Fault = 'forward' | 'error500' | 'hang' | 'reset';

/** Decides the fault of each request; `n` counts requests from 0; `body` is the request's whole body. */
export type FaultPlan = (n: number, req: IncomingMessage, body: Buffer) => Fault;

/** What became of one request, told to {@link FaultProxyOptions.onExchange} once it is known. */
export interface ProxyExchange {
  /** The request's number (as the plan saw it). */
  n: number;
  req: IncomingMessage;
  body: Buffer;
  fault: Fault;
  /** Forwarded requests: the receiver that answered last (after failovers). */
  target?: string;
  /** The answer's status: the receiver's, 500 for `error500`, 502 when forwarding failed. Absent for `hang` and `reset`. */
  statusCode?: number;
  /** The start of the receiver's answer body (1 KiB at most). */
  answer?: string;
  /** Forwarding failed: Node's error code (`ECONNRESET`, `ECONNREFUSED`, …). */
  error?: string;
}

export interface FaultProxyOptions {
  /** Receiver base URLs (`http://127.0.0.1:port`), used in turn. */
  targets: readonly string[];
  /** Default: forward everything. */
  plan?: FaultPlan;
  /**
   * Like a load balancer's passive health check: when a target refuses the connection (or a reused
   * keep-alive socket turns out dead), the request goes to the next target instead; 502 only when
   * every target fails so. Default false: such a request answers 502.
   */
  failover?: boolean;
  /**
   * Called once per request when its fate is known: at once for `error500`, `hang` and `reset`;
   * when the receiver answered (whole body read) or forwarding failed for `forward`.
   */
  onExchange?: (exchange: ProxyExchange) => void;
}

export interface FaultProxy {
  readonly url: string;
  /** Requests seen, per fault; `failover`: requests sent on to another target after a refusal. */
  readonly counts: Record<Fault | 'upstreamError' | 'failover', number>;
  setPlan(plan: FaultPlan): void;
  setTargets(targets: readonly string[]): void;
  close(): Promise<void>;
}

/** Seeded, reproducible pseudo-random numbers in [0, 1) (mulberry32). */
export { seededRandom } from '../../packages/core/test/helpers/seeded-random.js';

/** Starts the proxy on 127.0.0.1, a free port. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  let targets = [...options.targets];
  let plan: FaultPlan = options.plan ?? (() => 'forward');
  let n = 0;
  let turn = 0;
  const counts = { forward: 0, error500: 0, hang: 0, reset: 0, upstreamError: 0, failover: 0 };
  const sockets = new Set<Socket>();
  const failover = options.failover === true;
  const onExchange = options.onExchange ?? (() => {});
  const ANSWER_CHARS = 1024;

  /** Forwards to the next target in turn, or on failover to the target after `index` (the one that refused). */
  const forward = (req: IncomingMessage, res: ServerResponse, n: number, triesLeft = targets.length, after?: number): void => {
    const index = after === undefined ? turn++ % targets.length : (after + 1) % targets.length;
    const targetUrl = targets[index]!;
    const target = new URL(targetUrl);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const statusCode = answer.statusCode ?? 502;
        res.writeHead(statusCode, answer.headers);
        let text = '';
        answer.on('data', (c: Buffer) => {
          if (text.length < ANSWER_CHARS) text += c.toString('utf8').slice(0, ANSWER_CHARS - text.length);
        });
        answer.on('end', () => onExchange({ n, req, body: body(req), fault: 'forward', target: targetUrl, statusCode, answer: text }));
        answer.pipe(res);
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // Nothing reached the receiver: safe to send the request elsewhere, as a load balancer does.
      const notSent = err.code === 'ECONNREFUSED' || (err.code === 'ECONNRESET' && upstream.reusedSocket);
      if (failover && notSent && triesLeft > 1) {
        counts.failover++;
        forward(req, res, n, triesLeft - 1, index);
        return;
      }
      // A receiver that is down looks, to the sender, like what a load balancer answers for it.
      counts.upstreamError++;
      onExchange({ n, req, body: body(req), fault: 'forward', target: targetUrl, statusCode: 502, error: err.code ?? err.message });
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"upstream unavailable"}');
    });
    upstream.end(body(req));
  };

  const bodies = new WeakMap<IncomingMessage, Buffer>();
  const body = (req: IncomingMessage): Buffer => bodies.get(req) ?? Buffer.alloc(0);

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const whole = Buffer.concat(chunks);
      bodies.set(req, whole);
      const number = n++;
      const fault = plan(number, req, whole);
      counts[fault]++;
      if (fault === 'error500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"injected"}');
        onExchange({ n: number, req, body: whole, fault, statusCode: 500 });
      } else if (fault === 'hang') {
        // Never answer: the sender's attempt timeout fires; the socket closes with the proxy.
        onExchange({ n: number, req, body: whole, fault });
      } else if (fault === 'reset') {
        req.socket.resetAndDestroy();
        onExchange({ n: number, req, body: whole, fault });
      } else {
        forward(req, res, number);
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    setPlan(p) {
      plan = p;
    },
    setTargets(t) {
      targets = [...t];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
