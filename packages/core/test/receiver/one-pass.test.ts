// One pass: from the adapter to the handler, each header the pipeline checks is read once per
// request (the precheck reads them, the body step and the body reader are handed what it found),
// counted on the headers object itself: a fetch `Headers` whose get() counts, a record behind a Proxy.
import { describe, expect, it } from 'vitest';
import { createFetchHandler, createReceiver, silentLogger, type HandlerContext } from '../../src/index.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';

const keys = createTestKeyPair();
const CHECKED = ['content-type', 'content-length', 'x-service-hash-algorithm', 'x-service-signature'];

/** A fetch `Headers` whose get() counts reads per name. */
function countingHeaders(init: Record<string, string>): { headers: Headers; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const headers = new Headers(init);
  const get = headers.get.bind(headers);
  // An own property over the prototype's get(): the object stays a real Headers.
  Object.defineProperty(headers, 'get', {
    value: (name: string): string | null => {
      reads.set(name.toLowerCase(), (reads.get(name.toLowerCase()) ?? 0) + 1);
      return get(name);
    },
  });
  return { headers, reads };
}

/** A record of headers behind a Proxy that counts property reads per name, and key listings. */
function countingRecord(headers: Record<string, string>): {
  headers: Record<string, string>;
  reads: Map<string, number>;
  listings: () => number;
} {
  const reads = new Map<string, number>();
  let listings = 0;
  const proxy = new Proxy(headers, {
    get(target, property, receiver) {
      if (typeof property === 'string') reads.set(property.toLowerCase(), (reads.get(property.toLowerCase()) ?? 0) + 1);
      return Reflect.get(target, property, receiver) as unknown;
    },
    ownKeys(target) {
      listings++;
      return Reflect.ownKeys(target);
    },
  });
  return { headers: proxy, reads, listings: () => listings };
}

function readsOf(reads: Map<string, number>): Record<string, number> {
  return Object.fromEntries(CHECKED.map((name) => [name, reads.get(name) ?? 0]));
}

const ONCE = Object.fromEntries(CHECKED.map((name) => [name, 1]));

describe('one pass through the receive path', () => {
  it('the Fetch handler: precheck, body read and body step read each checked header once, and the handler gets the same headers', async () => {
    const seen: HandlerContext[] = [];
    const handler = createFetchHandler({ publicKeys: keys.publicKeyPem, onEvent: (_e, ctx) => void seen.push(ctx), logger: silentLogger });
    const delivery = buildSignedRequest();
    const { headers, reads } = countingHeaders({ ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) });
    // A Request-shaped object, so the handler reads the very Headers object the test counts on.
    const request = { method: 'POST', url: 'https://receiver.example/webhooks/jobs', headers, body: new Response(delivery.body).body };
    const res = await handler(request as unknown as Request);
    expect(res.status).toBe(200);
    expect(readsOf(reads)).toEqual(ONCE);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers).toBe(headers);
  });

  it('receiver.handle over a Node-style record: each checked header read once, the keys never listed', async () => {
    const r = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
    const delivery = buildSignedRequest();
    const counted = countingRecord({ ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) });
    const res = await r.handle({ method: 'POST', headers: counted.headers, rawBody: delivery.body });
    expect(res.status).toBe(200);
    expect(readsOf(counted.reads)).toEqual(ONCE);
    expect(counted.listings()).toBe(0);
  });

  it('precheck then admission.receive: the body step reads no header again', async () => {
    const r = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
    const delivery = buildSignedRequest();
    const counted = countingRecord({ ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) });
    const { admission } = r.precheck({ method: 'POST', headers: counted.headers });
    expect(admission?.declaredBytes).toBe(Buffer.byteLength(delivery.body));
    const afterPrecheck = readsOf(counted.reads);
    expect((await admission!.receive(delivery.body)).status).toBe(200);
    expect(readsOf(counted.reads)).toEqual(afterPrecheck);
    expect(afterPrecheck).toEqual(ONCE);
  });

  it('a record spelling names in another case is walked once for all the names it misses, not once per name', async () => {
    const r = createReceiver({ publicKeys: keys.publicKeyPem, onEvent: () => {}, logger: silentLogger });
    const delivery = buildSignedRequest();
    const titled: Record<string, string> = {};
    for (const [name, value] of Object.entries(delivery.headers))
      titled[name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase())] = value;
    const counted = countingRecord(titled);
    const res = await r.handle({ method: 'POST', headers: counted.headers, rawBody: delivery.body });
    expect(res.status).toBe(200);
    expect(counted.listings()).toBe(1);
  });
});
