/**
 * createReceiverMetrics fed by a real receiver behind node:http, read back through GET /metrics as
 * Prometheus scrapes it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, JobhookError, type Receiver } from '../../src/index.js';
import { createReceiverMetrics, createReconcilerMetrics, type ReceiverMetrics } from '../../src/metrics/receiver-metrics.js';
import { buildSignedRequest, createTestKeyPair } from '../../src/testing/index.js';
import { sampleSum } from '../helpers/prometheus-text.js';

const keys = createTestKeyPair();
let registry: Registry;
let metrics: ReceiverMetrics;
let receiver: Receiver;
let server: Server;
let base: string;
const ownOutcomes: string[] = [];

beforeAll(async () => {
  registry = new Registry();
  metrics = createReceiverMetrics({ registry });
  receiver = createReceiver({
    publicKeys: keys.publicKeyPem,
    onEvent: () => {},
    // The metrics and the application's own outcome hook, both.
    onOutcome: (outcome) => {
      metrics.observe(outcome);
      ownOutcomes.push(outcome.kind);
    },
  });
  server = createServer((req, res) => {
    if (req.url === '/metrics') {
      void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void receiver.handle({ method: req.method ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) }).then((answer) => {
        res.writeHead(answer.status, answer.headers).end(answer.body);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await receiver.close();
});

async function post(request: { headers: Record<string, string>; body: Buffer }): Promise<number> {
  const res = await fetch(`${base}/webhooks/jobs`, { method: 'POST', headers: request.headers, body: request.body });
  await res.arrayBuffer();
  return res.status;
}

describe('createReceiverMetrics', () => {
  it('counts handled, duplicate and rejected requests by outcome, status and code, with their durations', async () => {
    const first = buildSignedRequest({ status: 'success' }, { privateKey: keys.privateKey });
    const second = buildSignedRequest({ status: 'fail' }, { privateKey: keys.privateKey });
    expect(await post(first)).toBe(200);
    expect(await post(second)).toBe(200);
    expect(await post(first)).toBe(200); // duplicate
    const tampered = { ...first, body: Buffer.from(first.body.toString('utf8').replace('"success"', '"fail"')) };
    expect(await post(tampered)).toBe(401);
    const unsigned = { headers: { 'content-type': 'application/json' }, body: first.body };
    expect(await post(unsigned)).toBe(401);

    const res = await fetch(`${base}/metrics`);
    expect(res.headers.get('content-type')).toBe(registry.contentType);
    const text = await res.text();
    const total = 'jobhook_webhooks_total';
    expect(sampleSum(text, total, { outcome: 'handled', status: '200', code: '' })).toBe(2);
    expect(sampleSum(text, total, { outcome: 'duplicate', status: '200', code: '' })).toBe(1);
    expect(sampleSum(text, total, { outcome: 'rejected', status: '401', code: 'ERR_SIGNATURE_INVALID' })).toBe(1);
    expect(sampleSum(text, total, { outcome: 'rejected', status: '401', code: 'ERR_SIGNATURE_MISSING' })).toBe(1);
    expect(sampleSum(text, total)).toBe(5);
    // One duration sample per request; the +Inf bucket holds them all.
    const hist = 'jobhook_webhook_duration_seconds';
    expect(sampleSum(text, `${hist}_count`, { outcome: 'handled' })).toBe(2);
    expect(sampleSum(text, `${hist}_bucket`, { outcome: 'handled', le: '+Inf' })).toBe(2);
    expect(sampleSum(text, `${hist}_count`, { outcome: 'rejected' })).toBe(2);
    expect(sampleSum(text, `${hist}_sum`, { outcome: 'handled' })).toBeGreaterThan(0);
    expect(ownOutcomes).toEqual(['handled', 'handled', 'duplicate', 'rejected', 'rejected']);
  });

  it("a second set of metrics on the same registry reuses the first one's series; a clashing name is refused", async () => {
    const shared = new Registry();
    const a = createReceiverMetrics({ registry: shared, prefix: 'app_' });
    const b = createReceiverMetrics({ registry: shared, prefix: 'app_' });
    a.observe({ kind: 'handled', status: 200, durationMs: 3 });
    b.observe({ kind: 'handled', status: 200, durationMs: 4 });
    expect(sampleSum(await shared.metrics(), 'app_webhooks_total', { outcome: 'handled' })).toBe(2);

    const clash = new Registry();
    new Counter({ name: 'jobhook_webhooks_total', help: 'not ours', labelNames: ['route'], registers: [clash] });
    expect(() => createReceiverMetrics({ registry: clash })).toThrow(JobhookError);
    expect(() => createReceiverMetrics({ registry: clash })).toThrow(/already has a metric named jobhook_webhooks_total/);
  });

  it('refuses a prefix that cannot start a metric name, and unordered buckets', () => {
    expect(() => createReceiverMetrics({ registry: new Registry(), prefix: 'my-app.' })).toThrow(/prefix must match/);
    expect(() => createReceiverMetrics({ registry: new Registry(), buckets: [1, 0.5] })).toThrow(
      /^createReceiverMetrics: buckets must be increasing positive finite numbers \(seconds\), got 0\.5 at buckets\[1\]$/,
    );
    expect(() => createReceiverMetrics({ registry: new Registry(), buckets: [] })).toThrow(
      /buckets must be increasing .*, got an empty array/,
    );
  });

  it('refuses a registry that is not one, and checks the buckets before registering anything', () => {
    expect(() => createReceiverMetrics({ registry: {} as never })).toThrow(
      /^createReceiverMetrics: registry must have a getSingleMetric method \(a prom-client Registry\), got an object$/,
    );
    expect(() => createReconcilerMetrics({ registry: null as never })).toThrow(/^createReconcilerMetrics: registry must have/);
    const registry = new Registry();
    expect(() => createReceiverMetrics({ registry, buckets: [0] })).toThrow(JobhookError);
    expect(registry.getMetricsAsArray()).toEqual([]);
  });
});
