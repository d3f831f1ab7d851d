/**
 * The import graph of every package's sources, read by dpdm (type-only imports included: a circle
 * of types is still a circle a reader has to walk):
 * - no file circle in any package;
 * - inside @jobhook/core, imports flow one way between its rooms: a room imports only rooms of a
 *   lower rank (see CORE_RANKS), so that, for example, signature/ never reaches up to receiver/ or
 *   diagnosis/, and receiver/ and diagnosis/ do not import each other both ways.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCircular, parseDependencyTree, type DependencyTree } from 'dpdm';
import { describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGES = readdirSync(resolve(REPO, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/**
 * Core's rooms, lowest first. Files at the top of src/ (errors.ts) are rank 0. An entry point (an
 * `index.ts`, or a file package.json exports) gathers names from several rooms, so its own imports
 * are not ranked (imports of it are, by its room).
 */
const CORE_RANKS: Readonly<Record<string, number>> = {
  '': 0,
  canonical: 1,
  keys: 1,
  http: 1,
  tracing: 1,
  events: 2,
  // internal/ is the option kit every room checks options with (canonical/ too): it imports only errors.ts.
  internal: 0.5,
  log: 2,
  store: 3,
  recipient: 3,
  ledger: 4,
  signature: 4,
  diagnosis: 5,
  receiver: 6,
  adapter: 7,
  metrics: 7,
  // Entries only (an index.ts each): what they gather is ranked where it lives.
  json: 9,
  sign: 9,
  testing: 8,
};

/** The files core's package.json exports, relative to the repository. */
const CORE_ENTRIES: ReadonlySet<string> = new Set(
  Object.values(
    (JSON.parse(readFileSync(resolve(REPO, 'packages/core/package.json'), 'utf8')) as { exports: Record<string, { source?: string }> })
      .exports,
  )
    .map((entry) => entry.source)
    .filter((source): source is string => source !== undefined)
    .map((source) => relative(REPO, resolve(REPO, 'packages/core', source))),
);

async function sourceTree(pkg: string): Promise<DependencyTree> {
  const src = resolve(REPO, 'packages', pkg, 'src');
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => resolve(src, file));
  // Only the package's own files: other packages and node_modules are not followed.
  const own = new RegExp(`^${escapeRegExp(src + sep)}`);
  return parseDependencyTree(files, {
    context: REPO,
    transform: false,
    skipDynamicImports: false,
    tsconfig: resolve(REPO, 'packages', pkg, 'tsconfig.json'),
    include: /\.ts$/,
    exclude: new RegExp(`^(?!${escapeRegExp(src + sep)})|node_modules`),
    onProgress: () => {},
  }).then((tree) => Object.fromEntries(Object.entries(tree).filter(([file]) => own.test(resolve(REPO, file)))));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The room of a core file (`signature`, `receiver`, ...), '' for files at the top of src/. */
function roomOf(file: string): string {
  const path = relative(resolve(REPO, 'packages/core/src'), resolve(REPO, file)).split(sep);
  return path.length > 1 ? path[0]! : '';
}

describe('import graph', () => {
  it.each(PACKAGES)('%s has no file circle', async (pkg) => {
    const tree = await sourceTree(pkg);
    expect(Object.keys(tree).length).toBeGreaterThan(1);
    expect(parseCircular(tree).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  it('core: every room imports only rooms below it', async () => {
    const tree = await sourceTree('core');
    const upward: string[] = [];
    const unranked = new Set<string>();
    for (const [file, deps] of Object.entries(tree)) {
      const from = roomOf(file);
      if (!(from in CORE_RANKS)) unranked.add(from);
      if (file.endsWith(`${sep}index.ts`) || CORE_ENTRIES.has(file) || deps === null) continue;
      for (const dep of deps) {
        if (dep.id === null || !(dep.id in tree)) continue;
        const to = roomOf(dep.id);
        if (to === from) continue;
        if (!(to in CORE_RANKS)) unranked.add(to);
        if ((CORE_RANKS[to] ?? Infinity) >= (CORE_RANKS[from] ?? -Infinity)) upward.push(`${file} -> ${dep.id}`);
      }
    }
    // A new room needs its rank here, so its place in the order is decided, not left to chance.
    expect([...unranked]).toEqual([]);
    expect(upward).toEqual([]);
  });
});
