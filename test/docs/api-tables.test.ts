// Each package README's API table lists exactly what its entry exports at runtime: a name added to
// an entry without a row, or a row left behind by a removed export, fails here.
// An API table is a Markdown table whose header starts with `| export |`. It documents the entry
// named by the last `@jobhook/...` code span of the heading above it (`### Writing an adapter:
// `@jobhook/core/adapter``), else the README's own package. The names of a row are the code spans
// of its first cell that start with an identifier, except those inside parentheses (a class's
// members) and those after a `→` (what a call returns) up to the next `;`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';

/** The entries checked, by README. `@jobhook/core/internal` is not public and has no table. */
const ENTRIES: Record<string, { readme: string; load: () => Promise<object> }> = {
  '@jobhook/core': { readme: 'packages/core/README.md', load: () => import('@jobhook/core') },
  '@jobhook/core/sign': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/sign') },
  '@jobhook/core/json': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/json') },
  '@jobhook/core/canonical': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/canonical') },
  '@jobhook/core/diagnosis': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/diagnosis') },
  '@jobhook/core/redis': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/redis') },
  '@jobhook/core/testing': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/testing') },
  '@jobhook/core/adapter': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/adapter') },
  '@jobhook/core/metrics': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/metrics') },
  '@jobhook/core/ledger': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/ledger') },
  '@jobhook/core/recipient': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/recipient') },
  '@jobhook/core/tracing': { readme: 'packages/core/README.md', load: () => import('@jobhook/core/tracing') },
  '@jobhook/express': { readme: 'packages/express/README.md', load: () => import('@jobhook/express') },
  '@jobhook/koa': { readme: 'packages/koa/README.md', load: () => import('@jobhook/koa') },
  '@jobhook/fastify': { readme: 'packages/fastify/README.md', load: () => import('@jobhook/fastify') },
  '@jobhook/postgres': { readme: 'packages/postgres/README.md', load: () => import('@jobhook/postgres') },
  '@jobhook/client': { readme: 'packages/client/README.md', load: () => import('@jobhook/client') },
  '@jobhook/cli': { readme: 'packages/cli/README.md', load: () => import('@jobhook/cli') },
  '@jobhook/delivery': { readme: 'packages/delivery/README.md', load: () => import('@jobhook/delivery') },
  '@jobhook/sender': { readme: 'packages/sender/README.md', load: () => import('@jobhook/sender') },
};

/** The cells of a table row (`\|` inside a cell is not a separator). */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

/** The exported names a first cell documents (see the header comment). */
function namesOfCell(cell: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let returned = false;
  for (let i = 0; i < cell.length; i++) {
    const ch = cell[i]!;
    if (ch === '`') {
      const end = cell.indexOf('`', i + 1);
      if (end === -1) break;
      const span = cell.slice(i + 1, end);
      i = end;
      const name = /^[A-Za-z_$][\w$]*/.exec(span)?.[0];
      if (name !== undefined && depth === 0 && !returned) names.push(name);
    } else if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (ch === '→') returned = true;
    else if (ch === ';' && depth === 0) returned = false;
  }
  return names;
}

/** The API-table names of a README, by the entry each table documents. */
function apiTables(readme: string): Map<string, string[]> {
  const text = readFileSync(join(REPO_ROOT, readme), 'utf8');
  const own = /^# (@jobhook\/[\w-]+)/m.exec(text)?.[1] ?? readme;
  const tables = new Map<string, string[]>();
  let entry = own;
  let inTable = false;
  let inFence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    if (inFence) continue;
    if (/^#{1,6} /.test(line)) {
      const named = [...line.matchAll(/`(@jobhook\/[\w/-]+)`/g)].map((m) => m[1]!);
      entry = named.at(-1) ?? own;
      inTable = false;
      continue;
    }
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const row = cells(line);
    if (!inTable) {
      inTable = row[0] === 'export';
      continue;
    }
    if (/^-+$/.test(row[0]!.replace(/:/g, ''))) continue; // the |---| line
    const names = tables.get(entry) ?? [];
    names.push(...namesOfCell(row[0]!));
    tables.set(entry, names);
  }
  return tables;
}

describe('README API tables list exactly the runtime exports', () => {
  test.each(Object.entries(ENTRIES))('%s', async (entry, { readme, load }) => {
    const documented = apiTables(readme).get(entry);
    expect(documented, `${readme} has no API table (| export | ...) for ${entry}`).toBeDefined();
    const exported = Object.keys(await load()).sort();
    expect([...new Set(documented)].sort()).toEqual(exported);
    expect(documented!.length, `a name listed twice in ${readme}`).toBe(new Set(documented).size);
  });

  test('the row parser: calls, returns, class members, escaped pipes', () => {
    expect(
      namesOfCell('`parseBody(bytes, { maxDepth })` → `ParsedBody`; `serializeCanonical(parsed, profile)`; `toValue(parsed)`'),
    ).toEqual(['parseBody', 'serializeCanonical', 'toValue']);
    expect(namesOfCell('`JobhookError` (`code`, `status`, `toJSON()`), `ERROR_STATUS`')).toEqual(['JobhookError', 'ERROR_STATUS']);
    expect(cells('| `adapterPath(options)` → `string \\| undefined` | checks |')).toHaveLength(2);
  });
});
