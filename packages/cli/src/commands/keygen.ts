import { constants as fsConstants, type PathLike } from 'node:fs';
import { access, mkdir, open, type FileHandle } from 'node:fs/promises';
import { createPublicKey, generateKeyPair } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadPublicKey, MIN_RSA_BITS } from '@jobhook/core/sign';
import { defineCommand, UsageError } from '../command.js';
import { CliError } from '../errors.js';
import { write, type CliIo } from '../io.js';
import { integerFlag } from './flag-values.js';

/** Core refuses signatures over 4096 hex characters, i.e. keys over 16384 bits. */
const MAX_BITS = 16384;
/** The names the quickstarts read (`readFileSync('service-public.pem')`): keygen plays the service's part. */
const FILES = { private: 'service-private.pem', spki: 'service-public.pem', pkcs1: 'service-public.pkcs1.pem' } as const;

/** `jobhook keygen`: a key pair for local testing of a receiver (and for `jobhook sign`). */
export const keygenCommand = defineCommand({
  name: 'keygen',
  summary:
    "Generate an RSA key pair in the service's place: service-private.pem (PKCS#8), service-public.pem (SPKI), service-public.pkcs1.pem (PKCS#1).",
  synopsis: ['keygen --out DIR [--bits 3072] [--force]'],
  flags: [
    ['--out DIR', 'directory to write the keys to (created if missing)'],
    ['--bits N', `modulus length, ${MIN_RSA_BITS} to ${MAX_BITS} (default 3072)`],
    ['--force', 'overwrite existing key files'],
  ],
  notes: [
    'service-private.pem is written with mode 0600; service-public.pem is the file the receiver quickstarts read. Prints the paths and the key id (SHA-256 of the SPKI DER).',
  ],
  options: { out: { type: 'string' }, bits: { type: 'string', default: '3072' }, force: { type: 'boolean' } },
  maxPositionals: 0,
  async execute(values, _positionals, io: CliIo): Promise<number> {
    if (values.out === undefined) throw new UsageError('--out DIR is required', keygenCommand);
    const bits = integerFlag(keygenCommand, '--bits', values.bits, { min: MIN_RSA_BITS, max: MAX_BITS, fallback: 3072 });
    const force = values.force === true;
    const paths = {
      private: join(values.out, FILES.private),
      spki: join(values.out, FILES.spki),
      pkcs1: join(values.out, FILES.pkcs1),
    };
    // Check before the (slow) generation, and before writing anything, so a refusal leaves no half pair.
    if (!force) {
      const existing = (await Promise.all(Object.values(paths).map(async (p) => ((await exists(p)) ? p : null)))).filter((p) => p !== null);
      if (existing.length > 0) {
        throw new CliError('ERR_FILE_EXISTS', `refusing to overwrite ${existing.join(', ')} (use --force)`);
      }
    }

    const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', {
      modulusLength: bits,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const pkcs1 = createPublicKey(publicKey).export({ type: 'pkcs1', format: 'pem' }).toString();
    await mkdir(values.out, { recursive: true });
    await writeKeyFile(paths.private, privateKey, 0o600, force);
    await writeKeyFile(paths.spki, publicKey, 0o644, force);
    await writeKeyFile(paths.pkcs1, pkcs1, 0o644, force);

    const { id } = loadPublicKey(publicKey);
    await write(
      io.stdout,
      `private key (PKCS#8):  ${paths.private}\npublic key (SPKI):     ${paths.spki}\npublic key (PKCS#1):   ${paths.pkcs1}\nkey id:                ${id}\n`,
    );
    return 0;
  },
});

async function exists(path: PathLike): Promise<boolean> {
  try {
    await access(path, fsConstants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes one key file. Without `force` the open is exclusive (`wx`), so a file created meanwhile is
 * never clobbered; the explicit chmod makes the mode exact even when --force reuses a looser file.
 */
async function writeKeyFile(path: string, text: string, mode: number, force: boolean): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, force ? 'w' : 'wx', mode);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new CliError('ERR_FILE_EXISTS', `refusing to overwrite ${path} (use --force)`, { cause });
    throw new CliError('ERR_FILE_UNWRITABLE', `cannot write ${path}: ${(cause as Error).message}`, { cause });
  }
  try {
    await handle.chmod(mode);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
