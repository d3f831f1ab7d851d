import { generateKeyPair, type KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JobhookError } from '@jobhook/core';
import { optionError } from '@jobhook/core/internal';
import { loadPrivateKey } from '@jobhook/core/sign';
import type { AccountsConfig } from '../accounts/accounts-config.js';
import type { DevAccounts } from '../accounts/dev-accounts.js';
import { parseAccountsJson } from '../accounts/load-accounts-config.js';
import { createFileOnce } from './atomic-file.js';

/** The signing key in a state folder: PKCS#8 PEM, mode 0600. */
export const STATE_KEY_FILE = 'signing-key.pem';
/** The accounts in a state folder (the dev organizations and their tokens): JSON, mode 0600. */
export const STATE_ACCOUNTS_FILE = 'accounts.json';
/** Bits of the signing key generated when none is given. */
export const GENERATED_KEY_BITS = 3072;

const WHERE = 'createSender: stateDir';

/** A new RSA signing key of {@link GENERATED_KEY_BITS}. @internal */
export async function generateSigningKey(): Promise<KeyObject> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: GENERATED_KEY_BITS });
  return privateKey;
}

/** A file of the folder that cannot be read or written; `detail` says which file and which way (the CLI's error codes). */
function unusable(action: 'read' | 'write' | 'create the state folder', path: string, cause: unknown): JobhookError {
  return optionError(WHERE, `cannot ${action} ${path}: ${(cause as Error).message}`, {
    cause,
    detail: { path, access: action === 'read' ? 'read' : 'write' },
  });
}

/** The file's text, or undefined when there is none. */
async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
    throw unusable('read', path, err);
  }
}

/**
 * Creates the state folder when missing: mode 0700 (parents included), with a `.gitignore` of `*`
 * so a folder inside a repository is never committed. An existing folder is used as it is.
 * @internal
 */
export async function openStateDir(dir: string): Promise<void> {
  try {
    const created = await mkdir(dir, { recursive: true, mode: 0o700 });
    // The umask may have taken bits off the mode, never added: set it exactly.
    if (created !== undefined) await chmod(dir, 0o700);
    await createFileOnce(join(dir, '.gitignore'), '# jobhook serve state: signing key and API keys. Never commit.\n*\n', 0o644);
  } catch (err) {
    throw unusable('create the state folder', dir, err);
  }
}

/**
 * The signing key kept in `dir`: read when there, else generated and written (0600, atomically);
 * when another process wrote one first, that one is used.
 * @throws JobhookError `ERR_KEY_INVALID` naming the file when it holds no usable key.
 * @internal
 */
export async function stateSigningKey(dir: string): Promise<KeyObject> {
  const path = join(dir, STATE_KEY_FILE);
  let pem = await readIfThere(path);
  if (pem === undefined) {
    const key = await generateSigningKey();
    const created = await createFileOnce(path, key.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600).catch((err: unknown) => {
      throw unusable('write', path, err);
    });
    if (created) return key;
    pem = await readFile(path, 'utf8');
  }
  // Checked here, not by loadPrivateKey, whose message for a text without a PEM header may quote it.
  if (!pem.includes('-----BEGIN')) throw new JobhookError('ERR_KEY_INVALID', `${WHERE}: ${path}: not a PEM document (no -----BEGIN line)`);
  try {
    return loadPrivateKey(pem);
  } catch (err) {
    if (err instanceof JobhookError) throw new JobhookError(err.code, `${WHERE}: ${path}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * The accounts kept in `dir`: read and checked when there, else `generate()`d and written (0600,
 * atomically: they hold the API tokens); when another process wrote them first, those are used.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the file and the field when they break a rule.
 * @internal
 */
export async function stateAccounts(dir: string, generate: () => DevAccounts): Promise<AccountsConfig> {
  const path = join(dir, STATE_ACCOUNTS_FILE);
  let text = await readIfThere(path);
  if (text === undefined) {
    const { config } = generate();
    const created = await createFileOnce(path, `${JSON.stringify(config, null, 2)}\n`, 0o600).catch((err: unknown) => {
      throw unusable('write', path, err);
    });
    if (created) return config;
    text = await readFile(path, 'utf8');
  }
  return parseAccountsJson(text, path);
}
