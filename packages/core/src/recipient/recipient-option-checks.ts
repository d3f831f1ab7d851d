import { checkInteger, checkOneOf, optionError } from '../internal/option-checks.js';
import { resolveLogger } from '../log/log-option-checks.js';
import type { Logger } from '../log/logger.js';
import { DEFAULT_RECIPIENT_TAG_MAX_AGE_MS, recipientUrlHash, resolveRecipientSecrets } from './recipient-tag.js';

// The recipient options of createReceiver and constructEvent (recipientSecret, recipientCheck,
// recipientUrl, recipientTagMaxAgeMs) are checked here; the check itself reads only the result.

/** What a receiver does with a delivery whose recipient tag is missing or wrong. */
export type RecipientCheckMode = 'enforce' | 'log';

/**
 * Recipient binding, shared by `createReceiver` (so every adapter) and `constructEvent`. A valid
 * signature proves the service sent a delivery, not that the job is yours: any organization can
 * submit a job with your URL as its `webhook_receiver`. With `recipientSecret`, only jobs whose
 * `user_webhook_parameters` carried a tag made with that secret (`@jobhook/client`'s
 * `createClient({ recipientSecret })`, or `createRecipientTag` from `@jobhook/core/recipient`)
 * reach the handler.
 */
export interface RecipientOptions {
  /**
   * The secret(s) recipient tags are made with: one string, or a list during a rotation (the new
   * secret first; each is tried, in constant time). At least 16 bytes each. Default none: no check,
   * `user_parameters` handed on as it came. Use one secret per receiver.
   */
  recipientSecret?: string | readonly string[];
  /**
   * `'enforce'` (default): a verified delivery without a valid tag, or whose tag's nonce is bound
   * to another job (`createReceiver` binds each nonce to the first job that carried it), is refused,
   * 403, before the replay window and the claim, so the handler never runs. The response body says
   * only `ERR_RECIPIENT_REFUSED`; the error, the outcome and the log keep the cause
   * (`ERR_RECIPIENT_TAG_MISSING` / `_INVALID` / `_EXPIRED` / `_REUSED`). `'log'`: the same check,
   * logged (one warning per cause per minute) and handled anyway: the rollout mode, while jobs
   * submitted before the tag existed still come.
   */
  recipientCheck?: RecipientCheckMode;
  /**
   * This receiver's public URL(s), as the submitter sends them in `webhook_receiver`: a tag made for
   * another URL is refused (`ERR_RECIPIENT_TAG_INVALID`, cause `url`). Default none: the tag's URL is
   * not checked, and a copied tag is bounded by `recipientTagMaxAgeMs` only.
   */
  recipientUrl?: string | readonly string[];
  /**
   * Longest age of a tag (from its issue at submission to the delivery's arrival), ms. Default
   * {@link DEFAULT_RECIPIENT_TAG_MAX_AGE_MS} (6 hours): the job's run time plus the service's
   * delivery span, with a margin. `clockSkewMs` is added, and bounds tags from the future.
   */
  recipientTagMaxAgeMs?: number;
}

/** {@link RecipientOptions} checked and filled in. @internal */
export interface ResolvedRecipientOptions {
  readonly secrets: readonly string[];
  readonly maxAgeMs: number;
  /** Hashes of the accepted webhook URLs (`recipientUrl`), or `undefined`: any URL. */
  readonly urlHashes: ReadonlySet<string> | undefined;
  /** Where the `'log'` mode writes; `undefined` in `'enforce'` mode (so it also says the mode). */
  readonly log: Logger | undefined;
}

/**
 * Checks the recipient options; `undefined` without `recipientSecret` (no other recipient option
 * may be given then). `logger` (checked only in `'log'` mode, where it is used) defaults to the
 * JSON logger at `warn` on stderr.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveRecipientOptions(options: RecipientOptions, owner: string, logger?: unknown): ResolvedRecipientOptions | undefined {
  const { recipientSecret, recipientUrl } = options;
  const recipientCheck = options.recipientCheck ?? 'enforce';
  const recipientTagMaxAgeMs = options.recipientTagMaxAgeMs ?? DEFAULT_RECIPIENT_TAG_MAX_AGE_MS;
  if (recipientSecret === undefined) {
    const stray = (['recipientCheck', 'recipientUrl', 'recipientTagMaxAgeMs'] as const).filter((name) => options[name] !== undefined);
    if (stray.length > 0) throw optionError(owner, `${stray.join(', ')} ${stray.length > 1 ? 'need' : 'needs'} recipientSecret`);
    return undefined;
  }
  const secrets = resolveRecipientSecrets(recipientSecret, owner);
  const mode = checkOneOf(owner, 'recipientCheck', recipientCheck, ['enforce', 'log'] as const);
  const maxAgeMs = checkInteger(owner, 'recipientTagMaxAgeMs', recipientTagMaxAgeMs, { min: 1 });
  let urlHashes: ReadonlySet<string> | undefined;
  if (recipientUrl !== undefined) {
    const urls: readonly unknown[] = Array.isArray(recipientUrl) ? recipientUrl : [recipientUrl];
    if (urls.length === 0 || urls.some((url) => typeof url !== 'string')) {
      throw optionError(owner, 'recipientUrl must be a URL string or a non-empty list of them');
    }
    urlHashes = new Set(urls.map((url) => recipientUrlHash(url as string, `${owner}: recipientUrl`)));
  }
  const log = mode === 'log' ? resolveLogger(owner, logger) : undefined;
  return { secrets, maxAgeMs, urlHashes, log };
}
