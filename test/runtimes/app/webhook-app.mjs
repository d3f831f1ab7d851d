// The app every runtime test serves, written once against the Fetch API so Bun, Deno and workerd run
// the same code: `POST /webhooks/jobs` is `createFetchHandler` (memory store, default logger: JSON
// lines on stderr),
// `POST /construct-event` is `constructEvent` by hand, `GET /handled` lists the job ids the handler
// ran for and the runtime's `navigator.userAgent` (so a test sees which runtime answered).
import { constructEvent, createFetchHandler, createVerifier, isJobhookError } from '@jobhook/core';

/**
 * @param {string} publicKeyPem the service's public key, PEM text.
 * @param {{ store?: import('@jobhook/core').IdempotencyStore }} [options] the receiver's store (default: memory).
 * @returns {(request: Request) => Promise<Response>}
 */
export function createWebhookApp(publicKeyPem, options = {}) {
  /** @type {string[]} */
  const handled = [];
  const verifier = createVerifier({ publicKeys: publicKeyPem });
  const webhook = createFetchHandler({
    publicKeys: publicKeyPem,
    ...(options.store === undefined ? {} : { store: options.store }),
    onEvent: (event) => {
      handled.push(event.job_id);
    },
  });

  return async function app(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/webhooks/jobs') return webhook(request);
    if (pathname === '/construct-event' && request.method === 'POST') {
      try {
        const event = constructEvent(await request.arrayBuffer(), request.headers, verifier);
        return Response.json({ ok: true, event });
      } catch (err) {
        if (!isJobhookError(err)) throw err;
        return Response.json({ ok: false, status: err.status, code: err.code });
      }
    }
    if (pathname === '/handled' && request.method === 'GET') {
      return Response.json({ handled, userAgent: globalThis.navigator?.userAgent ?? null });
    }
    return new Response(null, { status: 404 });
  };
}
