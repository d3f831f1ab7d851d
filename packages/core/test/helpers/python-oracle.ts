/**
 * Runs the Python reference (`json.loads` then `json.dumps(..., sort_keys=True, indent=2)` and
 * `orjson.dumps(..., OPT_INDENT_2 | OPT_SORT_KEYS)`) over a batch of bodies in ONE python3 process.
 * See oracle.py for the wire format.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The Python profiles the oracle computes. */
export const ORACLE_PROFILES = ['python', 'python-ascii', 'orjson'] as const;
export type OracleProfile = (typeof ORACLE_PROFILES)[number];

/** One body to send to the oracle. */
export interface OracleCase {
  readonly id: string;
  readonly body: Uint8Array;
}

/** What one profile's reference serializer did. */
export type OracleOutput = { kind: 'bytes'; bytes: Buffer } | { kind: 'error'; error: string } | { kind: 'skipped' };

/** Python's verdict on one body. */
export interface OracleResult {
  readonly id: string;
  /** `json.detect_encoding(body)`: what `json.loads(bytes)` decodes the body as. */
  readonly encoding: string;
  /** The exception `json.loads(body)` raised, or `null` when it parsed. */
  readonly loadsError: string | null;
  /** True when the parsed value is a dict (only meaningful when `loadsError` is null). */
  readonly isObject: boolean;
  readonly outputs: Readonly<Record<OracleProfile, OracleOutput>>;
}

/** What the oracle reported about itself. */
export interface OracleMeta {
  readonly python: string;
  readonly orjson: string | null;
  readonly orjsonError: string | null;
  readonly intMaxStrDigits: number | null;
}

export interface OracleRun {
  readonly meta: OracleMeta;
  /** Number of results received (one per case). */
  readonly count: number;
  readonly elapsedMs: number;
}

/** Path of the Python script. */
export const ORACLE_SCRIPT = fileURLToPath(new URL('./oracle.py', import.meta.url));

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseOutput(raw: unknown, where: string): OracleOutput {
  if (!isRecord(raw)) throw new Error(`python oracle: ${where}: expected an object, got ${JSON.stringify(raw)}`);
  if (typeof raw['b64'] === 'string') return { kind: 'bytes', bytes: Buffer.from(raw['b64'], 'base64') };
  if (typeof raw['error'] === 'string') return { kind: 'error', error: raw['error'] };
  if (raw['skipped'] === true) return { kind: 'skipped' };
  throw new Error(`python oracle: ${where}: unexpected output ${JSON.stringify(raw)}`);
}

/** The caller's environment, minus what would change the reference's behaviour. */
function oracleEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONIOENCODING: 'utf-8' };
  delete env['PYTHONINTMAXSTRDIGITS'];
  return env;
}

const NOT_PARSED: OracleOutput = { kind: 'error', error: 'json.loads failed' };

function parseMeta(line: string | undefined): OracleMeta {
  const raw: unknown = line === undefined ? undefined : JSON.parse(line);
  if (!isRecord(raw) || !isRecord(raw['meta'])) {
    throw new Error(`python oracle: missing meta line; stdout starts with ${JSON.stringify((line ?? '').slice(0, 200))}`);
  }
  const m = raw['meta'];
  return {
    python: String(m['python']),
    orjson: typeof m['orjson'] === 'string' ? m['orjson'] : null,
    orjsonError: typeof m['orjson_error'] === 'string' ? m['orjson_error'] : null,
    intMaxStrDigits: typeof m['int_max_str_digits'] === 'number' ? m['int_max_str_digits'] : null,
  };
}

function parseResult(line: string): OracleResult {
  const raw: unknown = JSON.parse(line);
  if (!isRecord(raw) || typeof raw['id'] !== 'string') throw new Error(`python oracle: bad line ${line.slice(0, 200)}`);
  const id = raw['id'];
  const parsed = raw['loads'] === 'ok';
  return {
    id,
    encoding: String(raw['encoding']),
    loadsError: parsed ? null : String(raw['loads_error']),
    isObject: raw['is_object'] === true,
    outputs: {
      python: parsed ? parseOutput(raw['python'], `${id}/python`) : NOT_PARSED,
      'python-ascii': parsed ? parseOutput(raw['python-ascii'], `${id}/python-ascii`) : NOT_PARSED,
      orjson: parsed ? parseOutput(raw['orjson'], `${id}/orjson`) : NOT_PARSED,
    },
  };
}

/**
 * Sends every case to ONE `python3 oracle.py` process and hands each answer to `onResult` as it
 * arrives (in input order), so that large batches never hold every canonical form in memory.
 * `onMeta` runs first, with what the oracle reported about itself.
 * @throws Error (rejects) with a clear message when python3 is missing or the oracle misbehaves.
 */
export async function streamPythonOracle(
  cases: readonly OracleCase[],
  onResult: (result: OracleResult) => void,
  onMeta: (meta: OracleMeta) => void = () => {},
  python = process.env['PYTHON'] ?? 'python3',
): Promise<OracleRun> {
  const started = performance.now();
  const proc = spawn(python, [ORACLE_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], env: oracleEnv() });
  let stderr = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk: string) => {
    if (stderr.length < 8000) stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    proc.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        reject(
          new Error(
            `The differential test needs ${python} on PATH (it is the reference implementation) but it was not found. ` +
              'Install Python 3.11+ with orjson (the orjson profile is compared too), or set PYTHON to its path.',
          ),
        );
      } else {
        reject(new Error(`Could not run the python oracle (${python} ${ORACLE_SCRIPT}): ${err.message}`));
      }
    });
    proc.on('close', (code, signal) => resolve({ code, signal }));
  });
  // A failing child closes stdin early; the exit status reports why, so EPIPE here is not the story.
  proc.stdin.on('error', () => {});

  const reading = (async () => {
    let meta: OracleMeta | undefined;
    let count = 0;
    const lines = createInterface({ input: proc.stdout, crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.length === 0) continue;
      if (meta === undefined) {
        meta = parseMeta(line);
        onMeta(meta);
        continue;
      }
      const result = parseResult(line);
      const expected = cases[count];
      if (expected === undefined || expected.id !== result.id) {
        throw new Error(`python oracle answered ${result.id} where ${expected?.id ?? 'nothing'} was expected`);
      }
      count++;
      onResult(result);
    }
    return { meta, count };
  })();

  const writing = (async () => {
    for (const c of cases) {
      const line = `${JSON.stringify({ id: c.id, body_b64: Buffer.from(c.body).toString('base64') })}\n`;
      if (!proc.stdin.write(line)) await once(proc.stdin, 'drain');
    }
    proc.stdin.end();
  })();

  let meta: OracleMeta | undefined;
  let count: number;
  let status: { code: number | null; signal: NodeJS.Signals | null };
  try {
    // A spawn failure (no python3) rejects `exited`; a bad answer rejects `reading`.
    const [read, exit] = await Promise.all([reading, exited, writing.catch(() => undefined)]);
    ({ meta, count } = read);
    status = exit;
  } catch (err) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill();
    throw err;
  }
  if (status.code !== 0) {
    throw new Error(
      `The python oracle (${python} ${ORACLE_SCRIPT}) exited with status ${String(status.code)} ` +
        `(signal ${String(status.signal)}):\n${stderr.slice(0, 4000)}`,
    );
  }
  if (meta === undefined) throw new Error(`python oracle wrote nothing; stderr:\n${stderr.slice(0, 4000)}`);
  if (count !== cases.length) {
    throw new Error(`python oracle answered ${count} of ${cases.length} cases; stderr:\n${stderr.slice(0, 4000)}`);
  }
  return { meta, count, elapsedMs: performance.now() - started };
}
