// The repository's signature vectors (vectors/ at the repository root, made by vectors/generate.py):
// bodies signed by Python, each with the answer a correct verifier must give.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createVerifier } from '@jobhook/core';

/**
 * Verifies every vector with jobhook and counts the answers that match their expectation.
 * @returns {{ dir: string, found: false, missing: string[] } | { dir: string, found: true, agree: number, total: number, disagreeing: string[] }}
 */
export function checkVectors(dir) {
  const file = join(dir, 'vectors.jsonl');
  const keyFile = join(dir, 'keys/main.public.pkcs1.pem');
  const missing = [file, keyFile].filter((f) => !existsSync(f));
  if (missing.length > 0) return { dir, found: false, missing };
  const verifier = createVerifier({ publicKeys: readFileSync(keyFile) });
  let agree = 0;
  let total = 0;
  const disagreeing = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const vector = JSON.parse(line);
    let got;
    try {
      verifier.verify({ body: Buffer.from(vector.body_b64, 'base64'), signature: vector.signature });
      got = 'valid';
    } catch (err) {
      if (typeof err?.code !== 'string') throw err;
      got = err.code.startsWith('ERR_SIGNATURE') ? 'invalid' : 'malformed';
    }
    total++;
    const { expect } = vector;
    if (got === expect || (expect === 'not-valid' && got !== 'valid') || (expect === 'valid-or-malformed' && got !== 'invalid')) {
      agree++;
    } else {
      disagreeing.push(`${vector.id}: expected ${expect}, got ${got}`);
    }
  }
  return { dir, found: true, agree, total, disagreeing };
}
