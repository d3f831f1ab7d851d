/**
 * One python3 process (delivery-verify.py) that verifies deliveries as a Python client of the
 * service would; requests and answers are matched by id, so a receiver handler can await it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Python's verdict on one delivery (see delivery-verify.py). */
export interface PythonVerdict {
  id: string;
  ok: boolean;
  via?: 'cryptography' | 'openssl';
  digest?: string;
  body_is_canonical?: boolean;
  user_parameters?: string | null;
  error?: string;
}

export interface PythonVerifier {
  meta: { python: string; cryptography: string | null };
  verify(id: string, body: Buffer, signature: string, via?: 'auto' | 'openssl'): Promise<PythonVerdict>;
  close(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./delivery-verify.py', import.meta.url));

/** Starts the verifier with the service's public key (any PEM Node reads; passed to Python as SPKI). */
export async function startPythonVerifier(publicKeySpkiPem: string): Promise<PythonVerifier> {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-delivery-'));
  const pemPath = join(dir, 'public.pem');
  writeFileSync(pemPath, publicKeySpkiPem);
  const child: ChildProcessWithoutNullStreams = spawn('python3', [SCRIPT, pemPath], {
    env: { ...process.env, PYTHONIOENCODING: 'utf-8' },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const lines = createInterface({ input: child.stdout });
  const pending = new Map<string, (v: PythonVerdict) => void>();
  let meta: PythonVerifier['meta'] | undefined;
  const gotMeta = new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`delivery-verify.py exited (${String(code)}): ${stderr}`)));
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as { meta?: PythonVerifier['meta'] } & PythonVerdict;
      if (msg.meta !== undefined) {
        meta = msg.meta;
        resolve();
        return;
      }
      pending.get(msg.id)?.(msg);
      pending.delete(msg.id);
    });
  });
  await gotMeta;
  return {
    meta: meta as PythonVerifier['meta'],
    verify(id, body, signature, via = 'auto') {
      return new Promise((resolve) => {
        pending.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ id, body_b64: body.toString('base64'), signature, via })}\n`);
      });
    },
    async close() {
      child.stdin.end();
      if (child.exitCode === null) await once(child, 'exit');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
