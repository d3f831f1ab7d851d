// A real webhook receiver: core's createReceiver behind node:http on a free port. `gate` lets a test
// hold deliveries back (to make the webhook arrive after polling), `answers` records what was answered.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Receiver, ReceiverOutcome } from '@jobhook/core';

export interface ReceiverServer {
  /** The webhook URL, e.g. http://127.0.0.1:PORT/hooks. */
  url: string;
  /** What the receiver answered, in order. */
  answers: ReceiverOutcome[];
  /** When set, every delivery waits for it before reaching the receiver. */
  gate: Promise<void> | undefined;
  close(): Promise<void>;
}

export async function startReceiverServer(receiver: Receiver): Promise<ReceiverServer> {
  const answers: ReceiverOutcome[] = [];
  const state: ReceiverServer = {
    url: '',
    answers,
    gate: undefined,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        await state.gate;
        const answer = await receiver.handle({ method: req.method ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) });
        answers.push(answer.outcome);
        res.writeHead(answer.status, answer.headers).end(answer.body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return state;
}

/** Resolves once `check` holds, polling every 5 ms; fails after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
