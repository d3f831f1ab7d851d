import { randomBytes } from 'node:crypto';
import { link, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Codes of a file system without hard links (some network and container mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Writes `data` to a new temporary file next to `path`, with exactly `mode` (not widened by the
 * umask), flushed to the disk; returns its path.
 */
async function writeTemp(path: string, data: string, mode: number): Promise<string> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw err;
  }
  await handle.close();
  return temp;
}

/** Flushes a directory's entries (the rename or link) to the disk; a platform that cannot open a directory skips it. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (handle === undefined) return;
  try {
    await handle.sync();
  } catch {
    // Windows and some mounts refuse fsync on a directory: the rename is still atomic.
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` atomically (temporary file, fsync, rename): a reader sees the old
 * file or the new one, never a part, and a crash leaves one of them.
 * @internal
 */
export async function replaceFile(path: string, data: string, mode: number): Promise<void> {
  const temp = await writeTemp(path, data, mode);
  try {
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
  await syncDirectory(dirname(path));
}

/**
 * Creates `path` with `data` unless it exists, atomically: written aside, flushed, then hard-linked
 * into place, which fails when the name is taken. Two processes starting at once on one folder so
 * agree on one file (the loser reads the winner's). Resolves true when this call created the file.
 * On a file system without hard links it falls back to a rename after an existence check.
 * @internal
 */
export async function createFileOnce(path: string, data: string, mode: number): Promise<boolean> {
  const temp = await writeTemp(path, data, mode);
  try {
    await link(temp, path);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'EEXIST') return false;
    if (typeof code !== 'string' || !NO_HARD_LINKS.has(code)) throw err;
    const taken = await open(path, 'r').then(
      (h) => h.close().then(() => true),
      () => false,
    );
    if (taken) return false;
    await rename(temp, path);
  } finally {
    await unlink(temp).catch(() => {});
  }
  await syncDirectory(dirname(path));
  return true;
}
