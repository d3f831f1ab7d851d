/**
 * @jobhook/sender: the reference AI service of the async job webhooks: the `/v3` API, accounts and
 * credits, simulated providers; its webhooks are delivered by `@jobhook/delivery`.
 * @packageDocumentation
 */
export { createSender, type Sender } from './create-sender.js';
export type { SenderOptions } from './options/sender-options.js';
export type { AccountsConfig, KeyConfig, KeyKind, OrganizationConfig, TokenType } from './accounts/accounts-config.js';
export type { DevKeys } from './accounts/dev-accounts.js';
export { loadAccountsConfig } from './accounts/load-accounts-config.js';
export { validateAccountsConfig } from './accounts/validate-accounts-config.js';
export type { KeyUsage, ManagementKeyView } from './accounts/account-registry.js';
export type { HostResolver } from '@jobhook/delivery';
