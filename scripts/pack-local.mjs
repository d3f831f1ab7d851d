// Packs every publishable workspace (`npm pack`, the tarball `npm publish` would upload) into one
// folder and prints the `npm i` line of each package: its tarball, the tarballs of the @jobhook
// packages it depends on (they are not on the registry, so npm could not fetch them), and the
// framework it plugs into. Until the packages are published, this is how to install them.
//
//   npm run pack:local                       # builds, then packs into ./packs
//   node scripts/pack-local.mjs --out DIR    # packs what is built into DIR
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `--out DIR` (default `packs` in the repository), resolved against the working directory. */
function outDir(argv) {
  const at = argv.indexOf('--out');
  if (at === -1) return join(ROOT, 'packs');
  const value = argv[at + 1];
  if (value === undefined || value.startsWith('--')) {
    process.stderr.write('usage: node scripts/pack-local.mjs [--out DIR]\n');
    process.exit(2);
  }
  return resolve(value);
}

/** The non-private workspaces under packages/, with their manifests. */
function publishable() {
  return readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const dir = join('packages', entry.name);
      try {
        return { dir, manifest: JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) };
      } catch {
        return undefined;
      }
    })
    .filter((pkg) => pkg !== undefined && pkg.manifest.private !== true);
}

/** The @jobhook packages `name` needs, itself included: dependencies and required peers, transitively. */
function closure(name, byName) {
  const seen = new Set();
  const visit = (n) => {
    const pkg = byName.get(n);
    if (pkg === undefined || seen.has(n)) return;
    seen.add(n);
    for (const dep of [...Object.keys(pkg.manifest.dependencies ?? {}), ...requiredPeers(pkg.manifest)]) {
      if (dep.startsWith('@jobhook/')) visit(dep);
    }
  };
  visit(name);
  return [...seen];
}

/** Peer dependencies not marked optional (the framework an adapter plugs into), types aside. */
function requiredPeers(manifest) {
  const meta = manifest.peerDependenciesMeta ?? {};
  return Object.keys(manifest.peerDependencies ?? {}).filter((peer) => meta[peer]?.optional !== true && !peer.startsWith('@types/'));
}

const out = outDir(process.argv.slice(2));
const packages = publishable();
const missing = packages.filter((pkg) => {
  try {
    readdirSync(join(ROOT, pkg.dir, 'dist'));
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  process.stderr.write(`not built: ${missing.map((pkg) => pkg.manifest.name).join(', ')}; run \`npm run pack:local\` (it builds first)\n`);
  process.exit(1);
}
mkdirSync(out, { recursive: true });
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', out, ...packages.flatMap((pkg) => ['-w', pkg.dir])], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
);
const tarballOf = new Map(packed.map((pack) => [pack.name, join(out, pack.filename)]));
const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]));

const lines = packages.map(({ manifest }) => {
  const ours = closure(manifest.name, byName).map((name) => tarballOf.get(name));
  const theirs = requiredPeers(manifest).filter((peer) => !peer.startsWith('@jobhook/'));
  return `# ${manifest.name}\nnpm i ${[...ours, ...theirs].join(' ')}`;
});
process.stdout.write(
  `Packed ${packed.length} packages into ${out}.\n` +
    'Install what you need in your app (each line brings the @jobhook packages it depends on):\n\n' +
    `${lines.join('\n')}\n`,
);
