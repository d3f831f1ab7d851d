// The sender's HTTP server bounds how long a client may take to send its request: a body trickled
// a byte at a time, or headers that never end, get the connection closed at requestTimeoutMs /
// headersTimeoutMs, so slow clients cannot hold connections for good.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { startTestSender, TOKENS } from '../sender/sender-fixtures.js';

let sender: Sender;
let port: number;

beforeAll(async () => {
  // Short timeouts, and an idle timeout far longer: only the request timeout can end a trickle.
  const started = await startTestSender({ requestTimeoutMs: 400, headersTimeoutMs: 200, connectionTimeoutMs: 600_000 });
  sender = started.sender;
  port = Number(new URL(started.baseUrl).port);
});
afterAll(async () => {
  await sender?.close();
});

/** Opens a connection, sends `head`, then one byte of `trickle` every 20 ms until the server closes it; resolves with what it answered. */
function trickleUntilClosed(head: string, trickle: string): Promise<{ answer: string; bytesSent: number }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    let bytesSent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => {}); // a reset after the server gave up is a close too
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, bytesSent });
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (socket.destroyed || socket.writableEnded) return;
        socket.write(trickle[bytesSent % trickle.length] as string);
        bytesSent++;
      }, 20);
    });
    socket.on('timeout', () => reject(new Error('unexpected client-side timeout')));
  });
}

describe('HTTP timeouts', () => {
  test('a body trickled one byte at a time: the server answers 408 and closes the connection', async () => {
    const head =
      'POST /v3/universal-ai/async HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `Authorization: Bearer ${TOKENS.inference}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"model":"text/gen/x","input":{"a":"`;
    const { answer, bytesSent } = await trickleUntilClosed(head, 'aaaa');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(bytesSent).toBeLessThan(100_000); // the body never completed: the timeout ended it
  });

  test('headers that never end: the connection is closed as well', async () => {
    const { answer } = await trickleUntilClosed('GET /v3/universal-ai/async/x HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: a\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  test('the server still answers after closing slow clients', async () => {
    const res = await sender.app.inject({
      method: 'GET',
      url: '/v3/universal-ai/async/00000000-0000-4000-8000-000000000000',
      headers: { authorization: `Bearer ${TOKENS.inference}` },
    });
    expect(res.statusCode).toBe(404);
  });
});
