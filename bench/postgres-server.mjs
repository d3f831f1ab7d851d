// A throwaway PostgreSQL for the benchmarks (the same recipe as the store tests' helper,
// packages/postgres/test/helpers/postgres-server.ts): Debian's initdb and postgres, a free port on
// 127.0.0.1, a temporary directory, trust auth, run as the `postgres` user when we are root (initdb
// refuses root). Unlike the tests' server it keeps PostgreSQL's durable defaults (fsync, synchronous
// commit): each commit waits for its WAL flush, as in production.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function binDir() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)');
  return { dir: join(root, newest, 'bin'), version: newest };
}

function runAs() {
  if (process.getuid?.() !== 0) return {};
  const id = (flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Starts a cluster; returns `{ url, version, stop() }`. The server is killed at process exit too. */
export async function startPostgres() {
  const bin = binDir();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-bench-postgres-'));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const init = spawnSync(join(bin.dir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C'], {
    encoding: 'utf8',
    ...user,
  });
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stderr}`);
  const port = await freePort();
  const child = spawn(join(bin.dir, 'postgres'), ['-D', data, '-p', String(port), '-k', data, '-c', 'listen_addresses=127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  await new Promise((resolve, reject) => {
    let output = '';
    const read = (chunk) => {
      output = (output + chunk).slice(-4000);
      if (output.includes('ready to accept connections')) resolve();
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code, signal) => reject(new Error(`postgres exited (${signal ?? `code ${code}`}):\n${output}`)));
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    version: bin.version,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
