// A small real HTTP server playing the service's job endpoints, for the faults the reference sender
// does not produce on demand (429 with Retry-After, 503, dropped connections, hanging answers).
// Jobs finish `simulate.delay_ms` after submission; every request is recorded with its time.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const GOOD_KEY = 'test-key';
/** A key whose account has no credits: 402. */
export const BROKE_KEY = 'broke-key';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** What an injected fault answers; `destroy` drops the connection, `hang` never answers. */
export type Fault = { status: number; headers?: Record<string, string>; body?: string } | 'destroy' | 'hang';

export interface FakeService {
  url: string;
  requests: RecordedRequest[];
  /** Faults answered to the next requests, in order, before normal handling resumes. */
  faults: Fault[];
  /**
   * The same service in process, as a `fetch` for `createClient({ fetch })`: no sockets, answers
   * in microtasks, times read from `performance.now()`. For tests on virtual time
   * (`vi.useFakeTimers`), where only the client's timers decide when things happen. `destroy`
   * rejects as undici does on a dropped connection; `hang` never answers until the request's
   * signal aborts.
   */
  fetch: typeof globalThis.fetch;
  close(): Promise<void>;
}

/** What the service answers to a request that is not a fault. */
interface Answer {
  status: number;
  body: unknown;
}

interface FakeJob {
  id: string;
  finishAt: number;
  outcome: 'success' | 'fail';
  output: unknown;
}

export async function startFakeService(): Promise<FakeService> {
  const jobs = new Map<string, FakeJob>();
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const hanging = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body, at: performance.now() });
      const fault = faults.shift();
      if (fault === 'destroy') return void req.socket.destroy();
      if (fault === 'hang') return void hanging.add(res);
      if (fault !== undefined) {
        res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
        return void res.end(fault.body ?? JSON.stringify({ detail: `fault ${fault.status}` }));
      }
      send(res, handle(req.method ?? '', path, req.headers.authorization, body));
    });
  });

  function send(res: ServerResponse, { status, body }: Answer): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  function handle(method: string, path: string, auth: string | undefined, body: string): Answer {
    const answer = (status: number, json: unknown): Answer => ({ status, body: json });
    if (auth !== `Bearer ${GOOD_KEY}` && auth !== `Bearer ${BROKE_KEY}`) return answer(401, { detail: 'Invalid token.' });
    if (method === 'POST' && path === '/v3/universal-ai/async') {
      if (auth === `Bearer ${BROKE_KEY}`) return answer(402, { detail: 'Insufficient credits.' });
      const request = JSON.parse(body) as { input?: { simulate?: { outcome?: 'success' | 'fail'; delay_ms?: number; output?: unknown } } };
      const simulate = request.input?.simulate ?? {};
      const job: FakeJob = {
        id: randomUUID(),
        finishAt: simulate.delay_ms === -1 ? Infinity : performance.now() + (simulate.delay_ms ?? 0),
        outcome: simulate.outcome ?? 'success',
        output: simulate.output ?? { text: 'hello' },
      };
      jobs.set(job.id, job);
      return answer(201, { job_id: job.id, status: 'processing' });
    }
    const match = /^\/v3\/universal-ai\/async\/([^/]+)$/.exec(path);
    if (method === 'GET' && match !== null) {
      const job = jobs.get(decodeURIComponent(match[1]!));
      if (job === undefined) return answer(404, { detail: 'Not found.' });
      if (performance.now() < job.finishAt) return answer(200, { job_id: job.id, status: 'processing' });
      return answer(
        200,
        job.outcome === 'success'
          ? { job_id: job.id, status: 'success', output: job.output, cost: '0.01' }
          : { job_id: job.id, status: 'fail', error: { message: 'Provider failed', error_code: 'provider_error' } },
      );
    }
    return answer(404, { detail: 'Not found.' });
  }

  const inProcessFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init.method ?? 'GET';
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = typeof init.body === 'string' ? init.body : '';
    const { signal } = init;
    signal?.throwIfAborted();
    const path = url.pathname + url.search;
    requests.push({ method, path, headers, body, at: performance.now() });
    const fault = faults.shift();
    if (fault === 'destroy') {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    }
    if (fault === 'hang') {
      return new Promise<never>((_resolve, reject) => {
        if (signal === undefined || signal === null) return;
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    if (fault !== undefined) {
      return new Response(fault.body ?? JSON.stringify({ detail: `fault ${fault.status}` }), {
        status: fault.status,
        headers: { 'content-type': 'application/json', ...fault.headers },
      });
    }
    const { status, body: json } = handle(method, path, headers.authorization, body);
    return new Response(JSON.stringify(json), { status, headers: { 'content-type': 'application/json' } });
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    fetch: inProcessFetch,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Requests to one job's poll path. */
export function pollsOf(service: FakeService, jobId: string): RecordedRequest[] {
  return service.requests.filter((r) => r.method === 'GET' && r.path === `/v3/universal-ai/async/${jobId}`);
}
