// A shell line in the README or a guide must paste into a fresh terminal: every variable it reads
// (`$NAME`, `${NAME}`) is set by a line of the same page (`NAME=…`, `export NAME=…`, or a
// `NAME=… command` prefix), the way `$KEY` once was not. Shell parameters ($!, $?, $1) are not
// variables of the page and are left alone.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';

const pages = [
  join(REPO_ROOT, 'README.md'),
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(REPO_ROOT, 'docs', name)),
];

/** The ```sh blocks of a page, comments taken out. */
function shellOf(page: string): string {
  return [...readFileSync(page, 'utf8').matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1]!.replace(/(^|\s)#.*$/gm, '$1'))
    .join('\n');
}

test.each(pages.map((page) => [relative(REPO_ROOT, page), page] as const))(
  '%s: every shell variable used is set on the page',
  (_name, page) => {
    const code = shellOf(page);
    const used = new Set([...code.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!));
    const set = new Set([...code.matchAll(/(?:^|[\s;(&|])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!));
    expect([...used].filter((name) => !set.has(name))).toEqual([]);
  },
);
