// Fastify's setup for the shared body-boundary tests: real server, real sockets; an `onSend` hook
// records whether the request stream had been read (Fastify's content parser included).
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { createReceiver, type ReceiverOptions } from '@jobhook/core';
import { describeBodyBoundary } from '../../core/test/helpers/unfinished-body.js';
import { buildApp, listen, receiverOptions } from './helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describeBodyBoundary('@jobhook/fastify', async (options: Partial<ReceiverOptions> = {}) => {
  const readWhenAnswered: boolean[] = [];
  const opts = receiverOptions(options);
  const receiver = createReceiver(opts);
  app = await buildApp({ receiver }, (fastify) => {
    fastify.addHook('onSend', async (request) => {
      readWhenAnswered.push(request.raw.readableDidRead);
    });
  });
  return { url: await listen(app), stats: () => receiver.stats(), readWhenAnswered, handled: () => opts.calls.length };
});
