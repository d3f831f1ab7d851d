// Koa's setup for the shared body-boundary tests: real server, real sockets; an outer middleware
// records whether the request stream had been read once the webhook middleware had answered.
import Koa from 'koa';
import type { ReceiverOptions } from '@jobhook/core';
import { createKoaMiddleware } from '../src/index.js';
import { describeBodyBoundary } from '../../core/test/helpers/unfinished-body.js';
import { keys, listen } from './helpers.js';

describeBodyBoundary('@jobhook/koa', async (options: Partial<ReceiverOptions> = {}) => {
  const readWhenAnswered: boolean[] = [];
  let runs = 0;
  const middleware = createKoaMiddleware({ publicKeys: keys.publicKeyPem, onEvent: () => void runs++, ...options });
  const app = new Koa();
  app.use(async (ctx, next) => {
    await next();
    readWhenAnswered.push(ctx.req.readableDidRead);
  });
  app.use(middleware);
  return { url: await listen(app), stats: () => middleware.receiver.stats(), readWhenAnswered, handled: () => runs };
});
