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
  return parseAccountsJson(text, file);
}

/**
 * Parses and checks the text of an accounts file; `source` starts every error message. A JSON
 * syntax error is told by its position only: V8's message quotes the text around it, which in
 * this file may be an API token.
 * @throws JobhookError `ERR_OPTION_INVALID`
 * @internal
 */
export function parseAccountsJson(text: string, source: string): AccountsConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    const position = /at position (\d+)/.exec((cause as Error).message)?.[1];
    throw optionError(source, `not JSON${position === undefined ? '' : ` (a syntax error at position ${position})`}`);
  }
  return validateAccountsConfig(value, source);
}
