/**
 * The repository's signature vectors (vectors/ at the repository root, made by vectors/generate.py),
 * read for the tests that check a verification path against them. A missing or misshapen file is
 * reported in `error`, for the caller's first test to fail with: never a skip.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REPO_ROOT = path.resolve(PACKAGE_DIR, '../..');
const VECTORS_DIR = path.resolve(REPO_ROOT, 'vectors');

export type Expectation = 'valid' | 'invalid' | 'malformed' | 'valid-or-malformed' | 'not-valid';
export type Outcome = 'valid' | 'invalid' | 'malformed';
const EXPECTATIONS: readonly Expectation[] = ['valid', 'invalid', 'malformed', 'valid-or-malformed', 'not-valid'];
const VECTOR_FIELDS = ['body_b64', 'category', 'expect', 'id', 'key', 'mode', 'signature'].join(',');

export interface VectorCase {
  id: string;
  category: string;
  body: Buffer;
  signature: string;
  key: string;
  mode: 'utf8' | 'ascii';
  expect: Expectation;
}

export interface Loaded {
  cases: VectorCase[];
  keys: { mainSpki: string; mainPkcs1: string; otherSpki: string; otherPkcs1: string } | null;
  error: string | null;
}

export function loadVectors(): Loaded {
  const file = path.join(VECTORS_DIR, 'vectors.jsonl');
  const keyDir = path.join(VECTORS_DIR, 'keys');
  const needed = [
    file,
    ...['main.public.pem', 'main.public.pkcs1.pem', 'other.public.pem', 'other.public.pkcs1.pem'].map((k) => path.join(keyDir, k)),
  ];
  const missing = needed.filter((f) => !existsSync(f));
  if (missing.length > 0) {
    return {
      cases: [],
      keys: null,
      error:
        `The signature vectors are missing: ${missing.join(', ')}. ` +
        `They are committed in ${VECTORS_DIR} (made by python3 vectors/generate.py).`,
    };
  }
  const cases: VectorCase[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  for (const [n, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const raw = JSON.parse(line) as Record<string, unknown>;
    const fields = Object.keys(raw).sort().join(',');
    if (fields !== VECTOR_FIELDS) {
      return { cases: [], keys: null, error: `${file}:${n + 1}: fields ${fields}, expected ${VECTOR_FIELDS}` };
    }
    const { id, category, body_b64: bodyB64, signature, key, mode, expect: exp } = raw;
    if (
      typeof id !== 'string' ||
      typeof category !== 'string' ||
      typeof bodyB64 !== 'string' ||
      typeof signature !== 'string' ||
      typeof key !== 'string' ||
      (mode !== 'utf8' && mode !== 'ascii') ||
      !EXPECTATIONS.includes(exp as Expectation)
    ) {
      return { cases: [], keys: null, error: `${file}:${n + 1}: unexpected vector shape: ${line.slice(0, 300)}` };
    }
    cases.push({ id, category, body: Buffer.from(bodyB64, 'base64'), signature, key, mode, expect: exp as Expectation });
  }
  const read = (name: string): string => readFileSync(path.join(keyDir, name), 'utf8');
  return {
    cases,
    keys: {
      mainSpki: read('main.public.pem'),
      mainPkcs1: read('main.public.pkcs1.pem'),
      otherSpki: read('other.public.pem'),
      otherPkcs1: read('other.public.pkcs1.pem'),
    },
    error: null,
  };
}

/** The outcomes a case's `expect` admits. */
export function allowed(expectation: Expectation): readonly Outcome[] {
  switch (expectation) {
    case 'valid':
    case 'invalid':
    case 'malformed':
      return [expectation];
    case 'valid-or-malformed':
      return ['valid', 'malformed'];
    case 'not-valid':
      return ['invalid', 'malformed'];
  }
}
