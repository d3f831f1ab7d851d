import type { VerifiedWebhook } from '@jobhook/core';

declare global {
  // Express's own extension point: `res.locals` is typed `Express.Locals`.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /**
       * Set by `@jobhook/express` whenever the webhook's signature verified, whatever the answer
       * (handled, duplicate, in flight, handler failed or slow, store unavailable): the event and the
       * receiver's outcome, for code that runs when the response finishes (access logs, metrics).
       */
      jobhook?: VerifiedWebhook;
    }
  }
}
