#!/usr/bin/env node
// Takes docs/dashboard.png, the README's picture of the sender's web page: a sender (memory store)
// and a local receiver, a few jobs in every state (delivered at once, delivered after a retry and
// then redelivered, failed after its retries, a failed job, one without receiver, one processing),
// the page opened on the retried job in the npm-shipped Chromium (playwright-core, launched as
// scripts/chromium-launch.mjs says). Run after a build:
//   npx turbo run build && node scripts/dashboard-screenshot.mjs [out.png]
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReceiver } from '@jobhook/core';
import { createSender } from '@jobhook/sender';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions } from './chromium-launch.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(REPO, 'docs/dashboard.png'));

const sender = await createSender({
  allowInsecureReceivers: true,
  receiverAllowlist: ['127.0.0.0/8'],
  retryBaseMs: 300,
  maxRetryDelayMs: 1000,
  maxRetries: 2,
  jobDelayMs: 80,
  redeliverCooldownMs: 0,
});
const baseUrl = await sender.listen({ port: 0 });
const key = sender.devKeys.inference;
const receiver = createReceiver({ publicKeys: sender.publicKeyPem, onEvent: () => {} });
const seen = new Set();
// /ok answers as a jobhook receiver; /flaky answers 500 to a job's first delivery, then as /ok; /down is 503.
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const rawBody = Buffer.concat(chunks);
    const jobId = /"job_id": ?"([^"]+)"/.exec(rawBody.toString('utf8'))?.[1];
    if (req.url === '/down' || (req.url === '/flaky' && !seen.has(jobId))) {
      seen.add(jobId);
      res.writeHead(req.url === '/down' ? 503 : 500).end();
      return;
    }
    const answer = await receiver.handle({ method: 'POST', headers: req.headers, rawBody });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const hook = (path) => `http://127.0.0.1:${server.address().port}${path}`;

async function api(method, path, body) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res.json();
}
const submit = (model, receiverPath, simulate = {}) =>
  api('POST', '/v3/universal-ai/async', {
    model,
    input: { file: 'https://example.test/in.pdf', simulate },
    ...(receiverPath ? { webhook_receiver: hook(receiverPath) } : {}),
  });

await submit('ocr/ocr_async/google', '/ok');
await submit('translation/document_translation_async/deepl', '/down');
await submit('ocr/ocr_async/amazon', null);
await submit('audio/speech_to_text_async/openai', '/ok', { outcome: 'fail', error_code: 'provider_timeout' });
const retried = await submit('audio/speech_to_text_async/openai', '/flaky');
await submit('video/generation_async/amazon', '/ok', { delay_ms: 600000 });

const browser = await chromium.launch(await chromiumLaunchOptions());
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1050 } });
  await page.goto(`${baseUrl}/`);
  await page.getByTestId('api-key').fill(key);
  await page.getByTestId('use-key').click();
  // Every delivery settled: the failing one after its retries, the retried one delivered.
  await page.locator('[data-testid=job-row][data-delivery=failed]').waitFor({ timeout: 30_000 });
  await page.locator(`[data-testid=job-row][data-job-id="${retried.job_id}"][data-delivery=delivered]`).waitFor({ timeout: 30_000 });
  await page.locator(`[data-job-id="${retried.job_id}"]`).first().click();
  const detail = page.getByTestId('job-detail');
  await detail.getByTestId('webhook-body').waitFor();
  await detail.getByTestId('redeliver').click();
  await page.locator('[data-testid=attempt-row]').nth(2).waitFor();
  await page.locator(`[data-testid=job-row][data-job-id="${retried.job_id}"]`).getByText('delivered (round 1)').waitFor();
  await page.getByTestId('receiver-url').fill(hook('/ok'));
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await sender.close();
  await receiver.close();
  server.close();
}
