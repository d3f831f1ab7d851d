/**
 * A client for the adapters' tests: a request whose body never finishes, to show a server answered
 * without reading it.
 */
import { request as httpRequest } from 'node:http';

/** What the client saw when it sent a request head and the first chunk of a body it never finished. */
export interface UnfinishedUpload {
  status: number;
  /** The answer's `Connection` header. */
  connection: string | undefined;
  /** The answer's `Retry-After` header. */
  retryAfter: string | undefined;
  /** Milliseconds from sending the head to the answer's head. */
  answeredAfterMs: number;
  body: { error?: { code: string; message: string } };
  /** Body bytes the client had written when the answer arrived: the first chunk, nothing more. */
  sentWhenAnswered: number;
  /** Resolves when the server has closed the connection (the client never does). */
  closedByServer: Promise<void>;
}

/**
 * POSTs `headers` and a first 1 KiB chunk of a body that never ends (the rest of a declared
 * `Content-Length` never comes; without one, the chunked body is never terminated), then waits for
 * the answer: a server that waited for the body would never give one.
 */
export function sendUnfinishedBody(url: string, headers: Record<string, string>): Promise<UnfinishedUpload> {
  const first = Buffer.alloc(1024, 0x20);
  const start = performance.now();
  return new Promise((resolve, reject) => {
    let sent = 0;
    const req = httpRequest(url, { method: 'POST', headers });
    req.on('error', () => {}); // a write racing the server's close: the answer below is what counts
    req.on('socket', (socket) => socket.on('error', () => {}));
    req.on('response', (res) => {
      const sentWhenAnswered = sent;
      const answeredAfterMs = performance.now() - start;
      const closedByServer = new Promise<void>((done) => res.socket.once('close', () => done()));
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          retryAfter: res.headers['retry-after'],
          answeredAfterMs,
          body: JSON.parse(text),
          sentWhenAnswered,
          closedByServer,
        }),
      );
      res.on('error', reject);
    });
    req.write(first);
    sent += first.length;
  });
}

/**
 * Requests every adapter must refuse from the head alone, before the body arrives: [what, headers,
 * status, code]. The adapters' tests send each with a body that never ends.
 */
export const HEAD_REFUSALS: Array<[string, Record<string, string>, number, string]> = [
  [
    '401, signature missing (Content-Length declared)',
    { 'content-type': 'application/json', 'content-length': '65536' },
    401,
    'ERR_SIGNATURE_MISSING',
  ],
  [
    '401, signature not hex (chunked)',
    { 'content-type': 'application/json', 'x-service-signature': 'not-hex!' },
    401,
    'ERR_SIGNATURE_MALFORMED',
  ],
  [
    '401, signature of no configured key’s length',
    { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': 'ab'.repeat(384) },
    401,
    'ERR_SIGNATURE_MALFORMED',
  ],
  [
    '401, a made-up signature of the right length (no configured key decodes it)',
    { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': 'ab'.repeat(256) },
    401,
    'ERR_SIGNATURE_INVALID',
  ],
  [
    '415, content type not JSON',
    { 'content-type': 'text/plain', 'content-length': '65536', 'x-service-signature': 'ab'.repeat(256) },
    415,
    'ERR_UNSUPPORTED_MEDIA_TYPE',
  ],
];

/**
 * Headers of a body the precheck admits: a real signature of the test key over another body
 * (replayed), JSON, 64 KiB announced. `sendUnfinishedBody` with them holds the body open.
 */
export function admittedHead(signature: string): Record<string, string> {
  return { 'content-type': 'application/json', 'content-length': '65536', 'x-service-signature': signature };
}

/** A made-up signature of a 2048-bit key's length: hex, but no key decodes it. */
export const MADE_UP_SIGNATURE = 'ab'.repeat(256);
