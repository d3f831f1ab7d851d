// Express's setup for the shared body-boundary tests: real server, real sockets; `res.writeHead`
// records whether the request stream had been read when each answer's head was written.
import { afterEach } from 'vitest';
import { createTestKeyPair } from '@jobhook/core/testing';
import type { ReceiverOptions } from '@jobhook/core';
import { createExpressMiddleware } from '../src/index.js';
import { describeBodyBoundary } from '../../core/test/helpers/unfinished-body.js';
import { startApp, type RunningApp } from './helpers.js';

const keys = createTestKeyPair();
let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describeBodyBoundary('@jobhook/express', async (options: Partial<ReceiverOptions> = {}) => {
  const readWhenAnswered: boolean[] = [];
  let runs = 0;
  const middleware = createExpressMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => void runs++, ...options });
  running = await startApp((app) =>
    app.post(
      '/hook',
      (req, res, next) => {
        const writeHead = res.writeHead;
        res.writeHead = ((...args: Parameters<typeof writeHead>) => {
          readWhenAnswered.push(req.readableDidRead);
          return writeHead.apply(res, args);
        }) as typeof writeHead;
        next();
      },
      middleware,
    ),
  );
  return { url: `${running.url}/hook`, stats: () => middleware.receiver.stats(), readWhenAnswered, handled: () => runs };
});
