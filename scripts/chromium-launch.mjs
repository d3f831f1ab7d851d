// How the tests and scripts launch Chromium through playwright-core: one browser and one set of
// options, so the browser test sees the page as the README's screenshot does, on every machine.
//
// The browser is the one the root devDependency @sparticuz/chromium ships inside its npm tarball
// (a brotli-compressed headless Chromium, bin/chromium.br), so `npm ci` brings it and nothing is
// downloaded. It is decompressed once per package version into node_modules/.cache; the package's
// own executablePath() is not used because it writes loose files into /tmp and reuses whatever
// /tmp/chromium it finds (another version, or a file a killed run left half written).
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';

/** The environment variable that points the tests and scripts at another Chromium binary instead. */
export const CHROMIUM_ENV = 'JOBHOOK_CHROMIUM';

/**
 * Flags beside `headless: true`: no sandbox (CI containers run as root), no GPU, and no background
 * traffic (updates, sync, QUIC) beside the page's own requests (this machine's network is closed).
 */
export const CHROMIUM_ARGS = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]);

const PACKAGE = '@sparticuz/chromium';

/** One decompression per process, whichever caller asks first. */
let extraction;

/**
 * The path of the Chromium binary to launch: `$JOBHOOK_CHROMIUM` when set (it must exist), else the
 * binary from @sparticuz/chromium, decompressed on first use (about 200 MB, a few seconds) into
 * `node_modules/.cache/jobhook-chromium/<version>/chromium`. The file appears by an atomic rename,
 * so a concurrent or killed run never leaves a partial binary behind.
 *
 * @param env - the environment to read `JOBHOOK_CHROMIUM` from (default: `process.env`)
 * @example
 *   const path = await chromiumExecutable(); // …/node_modules/.cache/jobhook-chromium/147.0.0/chromium
 */
export async function chromiumExecutable(env = process.env) {
  const override = env[CHROMIUM_ENV];
  if (override !== undefined && override !== '') {
    if (!existsSync(override)) throw new Error(`${CHROMIUM_ENV}=${override}: no such file (unset it to use ${PACKAGE})`);
    return override;
  }
  extraction ??= extractPackagedChromium().catch((error) => {
    extraction = undefined;
    throw error;
  });
  return extraction;
}

/**
 * Options for playwright-core's `chromium.launch`: the binary from {@link chromiumExecutable},
 * headless, with {@link CHROMIUM_ARGS}.
 *
 * @param env - the environment to read `JOBHOOK_CHROMIUM` from (default: `process.env`)
 * @example
 *   const browser = await chromium.launch(await chromiumLaunchOptions());
 */
export async function chromiumLaunchOptions(env = process.env) {
  return Object.freeze({ executablePath: await chromiumExecutable(env), headless: true, args: [...CHROMIUM_ARGS] });
}

async function extractPackagedChromium() {
  let entry;
  try {
    entry = createRequire(import.meta.url).resolve(PACKAGE);
  } catch (error) {
    throw new Error(`${PACKAGE} is not installed: run npm ci (it is a root devDependency)`, { cause: error });
  }
  // build/cjs/index.cjs → the package's folder, whose bin/ holds the compressed browser.
  const packageDir = join(dirname(entry), '..', '..');
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const target = join(packageDir, '..', '..', '.cache', 'jobhook-chromium', version, 'chromium');
  if (existsSync(target)) return target;
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  try {
    await pipeline(
      createReadStream(join(packageDir, 'bin', 'chromium.br')),
      createBrotliDecompress(),
      createWriteStream(partial, { mode: 0o755 }),
    );
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
  }
  return target;
}
