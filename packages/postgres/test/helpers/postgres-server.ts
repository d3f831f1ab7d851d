// A real PostgreSQL for the tests: `DATABASE_URL` when given (its owner's database: the tests only
// create tables with unique names and `job_results`), otherwise a throwaway cluster made with
// Debian's binaries (`initdb`, then `postgres` itself as our child) in a temporary directory, on a
// free port of 127.0.0.1, trust auth, fsync off, removed afterwards. `initdb` refuses to run as root:
// as root the cluster's files belong to the `postgres` user and both binaries run as it (spawn's
// uid/gid, so the server stays our direct child and dies with us: kill-on-exit).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { killOnExit } from '../../../core/test/helpers/kill-on-exit.js';
import { freePort } from '../../../core/test/helpers/redis-server.js';

const START_TIMEOUT_MS = 30_000;
const BIND_ATTEMPTS = 5;

/** A PostgreSQL server for tests. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`, or `DATABASE_URL`. */
  readonly url: string;
  /** True when this is the `DATABASE_URL` server. */
  readonly external: boolean;
  /** A new pool of this server, ended by {@link dispose} if still open. */
  pool(options?: pg.PoolConfig): pg.Pool;
  /** Ends the pools, stops the server and removes its directory. */
  dispose(): Promise<void>;
}

/** The directory of `initdb` and `postgres`: on PATH, else Debian's newest /usr/lib/postgresql/<version>/bin. */
function binDir(): string {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath !== '') return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) {
    throw new Error(
      'PostgreSQL server binaries (initdb, postgres) not found: these tests need a real PostgreSQL. Install it (apt-get install postgresql; .ci/run does) or set DATABASE_URL',
    );
  }
  return join(root, newest, 'bin');
}

/** uid/gid of the `postgres` user when we are root (initdb refuses root), else nothing. */
function runAs(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string): number => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0) {
    throw new Error("running as root, and there is no `postgres` user to run initdb as (Debian's postgresql package creates it)");
  }
  return { uid, gid };
}

/** Starts `postgres` on `port`; resolves once it accepts connections, rejects with its output when it exits first. */
function startServer(bin: string, dataDir: string, port: number, user: object): Promise<ChildProcess> {
  const args = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-k',
    dataDir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=200',
  ];
  const child = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...user });
  killOnExit(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`postgres did not get ready in ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    const read = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4000);
      if (output.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not start postgres: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        Object.assign(new Error(`postgres exited (${signal ?? `code ${code}`}):\n${output}`), {
          portTaken: /address already in use/i.test(output),
        }),
      );
    });
  });
}

/**
 * A PostgreSQL for tests: `DATABASE_URL` when set (and `own` not), else a throwaway cluster. Fails
 * with a clear message when neither can be had.
 */
export async function startPostgresServer(options: { own?: boolean } = {}): Promise<PostgresServer> {
  const pools = new Set<pg.Pool>();
  const poolOf =
    (url: string) =>
    (config: pg.PoolConfig = {}) => {
      const pool = new pg.Pool({ connectionString: url, ...config });
      pool.on('error', () => undefined);
      pools.add(pool);
      return pool;
    };
  const endPools = async (): Promise<void> => {
    await Promise.all([...pools].map((p) => p.end().catch(() => undefined)));
    pools.clear();
  };
  const external = process.env.DATABASE_URL;
  if (external !== undefined && external !== '' && options.own !== true) {
    return { url: external, external: true, pool: poolOf(external), dispose: endPools };
  }
  const bin = binDir();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-postgres-'));
  if ('uid' in user) chownSync(dir, user.uid, user.gid);
  const dataDir = join(dir, 'data');
  try {
    const init = spawnSync(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
      encoding: 'utf8',
      ...user,
    });
    if (init.status !== 0) throw new Error(`initdb failed (${init.status ?? init.signal}):\n${init.stderr}${init.error?.message ?? ''}`);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      let child: ChildProcess;
      try {
        child = await startServer(bin, dataDir, port, user);
      } catch (err) {
        if ((err as { portTaken?: boolean }).portTaken === true && attempt < BIND_ATTEMPTS) continue;
        throw err;
      }
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      return {
        url,
        external: false,
        pool: poolOf(url),
        async dispose() {
          await endPools();
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGINT'); // fast shutdown
            await exited;
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
