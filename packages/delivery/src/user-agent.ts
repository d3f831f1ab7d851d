import { readFileSync } from 'node:fs';

/**
 * `jobhook-sender/<version>`, the default `User-Agent` of webhook requests (spec §6.1: it
 * identifies the sender). The version is read from this package's own package.json (one level up
 * from both `src` and `dist`), so it cannot drift from the published one.
 */
export const DEFAULT_USER_AGENT = `jobhook-sender/${readVersion()}`;

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
