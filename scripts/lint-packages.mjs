#!/usr/bin/env node
/**
 * Packs every publishable package (packages/*, not private) as `npm publish` would, then checks each
 * tarball: what it holds (LICENSE, README.md, package.json, dist; no build info, no tests, no source
 * map or sourceMappingURL pointing at a file the tarball lacks), publint --strict, and
 * arethetypeswrong. Run after a build (`npm run lint:packages` builds first). Exits 1 on any finding.
 *
 * arethetypeswrong findings accepted, and why:
 * - profile `node16` (node10 not checked): TypeScript's legacy `moduleResolution: "node"` (node10)
 *   ignores `exports`, so the subpaths (`@jobhook/core/redis`, `/testing`, …) cannot resolve there;
 *   every Node that `engines` allows reads `exports`, and TypeScript users need `node16`, `nodenext`
 *   or `bundler` resolution (the root README says so).
 * - `cjs-resolves-to-esm` ("ESM (dynamic import only)" under node16 from CJS): the packages are ESM
 *   only on purpose; Node >= 20.19 `require()`s them (require(esm)), which test/packages checks with a
 *   real CommonJS app. attw's bundled TypeScript predates require(esm) support, so it still reports it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'node_modules', '.bin');
const ATTW_ARGS = ['--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'table-flipped'];

/** Publishable workspace packages: the directories under packages/ whose package.json is not private. */
function publishablePackages() {
  return readdirSync(join(REPO, 'packages'))
    .map((name) => join(REPO, 'packages', name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .filter((dir) => !JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private);
}

/** Findings about the packed file list itself (reads map and code files from the package directory). */
function contentFindings(dir, files) {
  const findings = [];
  const packed = new Set(files);
  for (const required of ['LICENSE', 'README.md', 'package.json']) {
    if (!packed.has(required)) findings.push(`missing ${required}`);
  }
  if (!files.some((file) => file.startsWith('dist/'))) findings.push('no dist/ files');
  for (const file of files) {
    if (file.endsWith('.tsbuildinfo')) findings.push(`build info packed: ${file}`);
    if (/(^|\/)(test|tests|__tests__)\//.test(file) || /\.(test|spec)\.[cm]?[jt]s$/.test(file)) {
      findings.push(`test file packed: ${file}`);
    }
    if (file.endsWith('.map')) {
      const map = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      for (const source of map.sources ?? []) {
        const target = posix.join(posix.dirname(file), map.sourceRoot ?? '', source);
        if (!packed.has(target)) findings.push(`${file} points at ${target}, not packed`);
      }
    } else if (/\.(js|mjs|cjs|d\.ts)$/.test(file)) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(dir, file), 'utf8'))?.[1];
      if (url && !url.startsWith('data:')) {
        const target = posix.join(posix.dirname(file), url);
        if (!packed.has(target)) findings.push(`${file} maps to ${target}, not packed`);
      }
    }
  }
  return findings;
}

/** Runs a checker; true when it exits 0 (its own output goes to the terminal). */
function passes(command, args) {
  try {
    execFileSync(command, args, { stdio: 'inherit', cwd: REPO });
    return true;
  } catch {
    return false;
  }
}

const out = mkdtempSync(join(tmpdir(), 'jobhook-packs-'));
const failed = [];
let checked = 0;
try {
  for (const dir of publishablePackages()) {
    const [pack] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const tarball = join(out, pack.filename);
    const findings = contentFindings(
      dir,
      pack.files.map((file) => file.path),
    );
    console.log(`\n== ${pack.name}@${pack.version}: ${pack.files.length} files, ${pack.size} bytes packed`);
    for (const finding of findings) console.log(`  ${finding}`);
    const publintOk = passes(join(BIN, 'publint'), ['run', tarball, '--strict']);
    const attwOk = passes(join(BIN, 'attw'), [tarball, ...ATTW_ARGS]);
    checked += 1;
    if (findings.length > 0 || !publintOk || !attwOk) failed.push(pack.name);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

console.log(
  `\nlint:packages: ${checked - failed.length} of ${checked} packages clean${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
);
process.exitCode = failed.length > 0 ? 1 : 0;
