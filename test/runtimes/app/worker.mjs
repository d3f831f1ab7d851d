// The Cloudflare Workers entry (module syntax), bundled by esbuild and run by `workerd serve` with the
// `nodejs_compat` flag. The key is the text binding JOBHOOK_PUBLIC_KEY. The app is made on the first
// request, since bindings reach a module worker only through `fetch`; it then lives as long as the
// isolate, and so does its memory store.
import { createWebhookApp } from './webhook-app.mjs';

/** @type {((request: Request) => Promise<Response>) | undefined} */
let app;

export default {
  /** @param {Request} request @param {{ JOBHOOK_PUBLIC_KEY: string }} env */
  fetch(request, env) {
    app ??= createWebhookApp(env.JOBHOOK_PUBLIC_KEY);
    return app(request);
  },
};
