// The `availability` group's reference service: `jobhook serve` (default timings, memory queue, a new
// RSA key per run) with an accounts file of two organizations, the attacker's and the genuine one,
// allowed to deliver to loopback; and the few `/v3` calls the group makes.
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkTracked, tail } from './avail-processes.mjs';

const JOBHOOK_BIN = fileURLToPath(new URL('../packages/cli/bin/jobhook.js', import.meta.url));
const GUARD = fileURLToPath(new URL('./avail-guard.mjs', import.meta.url));
const START_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 15_000;
/** The model of every job: the simulated OCR provider, whose webhook is a small (~600 B) body. */
export const MODEL = 'ocr/ocr_async/amazon';

function organization(id) {
  const member = `${id}@${id}.test`;
  return {
    token: `${id}_inf_${randomBytes(16).toString('hex')}`,
    config: (token) => ({
      id,
      name: id,
      members: [member],
      keys: [{ id: randomUUID(), token, kind: 'inference', name: 'bench', member, balance: null, revoked: false }],
    }),
  };
}

/**
 * Starts `jobhook serve --port 0` in `dir` (accounts file, public key) and waits for its banner.
 * Resolves `{ url, publicKeyPath, tokens: { attacker, genuine }, child, stderr() }`.
 */
export async function startService(dir) {
  const attacker = organization('attacker');
  const genuine = organization('genuine');
  const accountsPath = join(dir, 'accounts.json');
  const publicKeyPath = join(dir, 'service-public.pem');
  writeFileSync(
    accountsPath,
    JSON.stringify({ organizations: [attacker.config(attacker.token), genuine.config(genuine.token)] }, null, 2),
    {
      mode: 0o600,
    },
  );
  const args = [
    ...[process.execPath, JOBHOOK_BIN, 'serve', '--port', '0', '--config', accountsPath, '--public-key-out', publicKeyPath],
    ...['--allow-insecure-receivers', '--allow-receiver', '127.0.0.0/8', '--no-dashboard'],
  ];
  const child = forkTracked(GUARD, args);
  const stderr = tail(child.stderr);
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`jobhook serve: no banner in ${START_TIMEOUT_MS} ms; stderr: ${stderr()}`)),
      START_TIMEOUT_MS,
    );
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`jobhook serve exited (${code}) before listening; stderr: ${stderr()}`));
    });
  });
  child.stdout.resume();
  return { url, publicKeyPath, tokens: { attacker: attacker.token, genuine: genuine.token }, child, stderr };
}

async function call(url, token, init = {}) {
  const res = await fetch(url, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** `POST /v3/universal-ai/async`: a job whose webhook goes to `receiver`. Resolves `{ status, jobId? }`. */
export async function submitJob(serviceUrl, token, receiver, input) {
  const r = await call(`${serviceUrl}/v3/universal-ai/async`, token, {
    method: 'POST',
    body: JSON.stringify({ model: MODEL, input, webhook_receiver: receiver }),
  });
  return {
    status: r.status,
    jobId: r.status === 201 ? r.json?.job_id : undefined,
    detail: r.status === 201 ? undefined : r.text.slice(0, 300),
  };
}

/** `GET …/{job_id}/deliveries`: `{ job_id, delivery, round, attempts }` (null when not 200). */
export async function jobDeliveries(serviceUrl, token, jobId) {
  const r = await call(`${serviceUrl}/v3/universal-ai/async/${jobId}/deliveries`, token);
  return r.status === 200 ? r.json : null;
}

/** `GET /v3/universal-ai/async/counts`: the organization's jobs counted by status and delivery state. */
export async function jobCounts(serviceUrl, token) {
  const r = await call(`${serviceUrl}/v3/universal-ai/async/counts`, token);
  return r.status === 200 ? r.json : null;
}
