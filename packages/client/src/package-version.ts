import { readFileSync } from 'node:fs';

// Module state on purpose: the version is read from the file once per process.
let version: string | undefined;

/** The package's version, read once, lazily: importing the package should not touch the file system. @internal */
export function packageVersion(): string {
  if (version === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
      version = typeof pkg.version === 'string' ? pkg.version : '0';
    } catch {
      version = '0';
    }
  }
  return version;
}
