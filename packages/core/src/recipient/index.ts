/**
 * @jobhook/core/recipient: the recipient tag, which binds a job to its receiver. The submitting side
 * (`@jobhook/client`, or your own HTTP code) puts it in `user_webhook_parameters`; a receiver with
 * `recipientSecret` refuses deliveries without a valid one.
 * @packageDocumentation
 */
export {
  DEFAULT_RECIPIENT_TAG_MAX_AGE_MS,
  MAX_RECIPIENT_SECRETS,
  MIN_RECIPIENT_SECRET_BYTES,
  RECIPIENT_TAG_KEY,
  createRecipientTag,
  normalizeRecipientUrl,
  withRecipientTag,
  type CreateRecipientTagOptions,
  type RecipientTag,
  type RecipientTagCause,
} from './recipient-tag.js';
export type { RecipientCheckMode, RecipientOptions } from './recipient-option-checks.js';
export { RECIPIENT_REFUSED_ANSWER } from '../errors.js';
