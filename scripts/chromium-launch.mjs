// How the tests and scripts launch Debian's Chromium through playwright-core: one set of options,
// so the browser test sees the page as the README's screenshot does.

/**
 * Options for `chromium.launch`: Debian's binary, headless, no sandbox (CI containers run as root)
 * and no background traffic (updates, sync, QUIC) beside the page's own requests.
 */
export const CHROMIUM_LAUNCH = Object.freeze({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ],
});
