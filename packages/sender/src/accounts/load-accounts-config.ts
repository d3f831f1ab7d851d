import { readFile } from 'node:fs/promises';
import { describeValue, optionError } from '@jobhook/core/internal';
import type { AccountsConfig } from './accounts-config.js';
import { validateAccountsConfig } from './validate-accounts-config.js';

/**
 * Reads an accounts file (JSON, format in the README) and checks every rule of spec §2.1.
 * Error messages start with the path of the file, then the path of the bad field.
 *
 * @example
 * ```ts
 * const sender = await createSender({ accounts: await loadAccountsConfig('accounts.json') });
 * ```
 * @throws JobhookError `ERR_OPTION_INVALID` when the file cannot be read, is not JSON or breaks a rule.
 */
export async function loadAccountsConfig(file: string): Promise<AccountsConfig> {
  if (typeof file !== 'string' || file.length === 0) {
    throw optionError('loadAccountsConfig', `file must be a non-empty path, got ${describeValue(file)}`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw optionError(file, `cannot read the accounts file: ${(cause as Error).message}`, { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw optionError(file, `not JSON: ${(cause as Error).message}`, { cause });
  }
  return validateAccountsConfig(value, file);
}
